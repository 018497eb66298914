// The holdings the admin API reports to the coordinator: objects under each named input, CVMFS by
// repository, and fast enough over a large cache that asking every interval is harmless.

import { describe, expect, it } from 'vitest';
import type { EntryMeta } from '../../gateway/cache/entry.ts';
import { holdingsOf } from '../../gateway/holdings.ts';

const entry = (url: string, size: number, repo?: string) => ({ url, size, ...(repo ? { repo } : {}) }) as unknown as EntryMeta;

describe('holdings of named inputs', () => {
  it('counts an object, a prefix with or without its slash, and a repository', async () => {
    const entries = [
      entry('s3://kek/run42/a.root', 3),
      entry('s3://kek/run42/sub/b.root', 2),
      entry('s3://kek/run420/c.root', 100), // not under run42
      entry('http://cvmfs.example/cvmfs/atlas.cern.ch/data/x', 7, 'atlas.cern.ch'),
    ];
    const r = await holdingsOf(entries, ['s3://kek/run42', 's3://kek/run42/', 's3://kek/run42/a.root', 's3://kek', 'cvmfs://atlas.cern.ch', 's3://other/']);
    expect(r.map((h) => [h.bytes, h.objects])).toEqual([[5, 2], [5, 2], [3, 1], [105, 3], [7, 1], [0, 0]]);
  });

  it('answers for 1000 inputs over 200,000 objects in a fraction of what one check per pair would take', async () => {
    const entries = Array.from({ length: 200_000 }, (_, i) => entry(`s3://kek/set${i % 500}/run${i % 37}/f${i}.root`, 1));
    const inputs = Array.from({ length: 1000 }, (_, i) => `s3://kek/set${i}`);
    const t = performance.now();
    const r = await holdingsOf(entries, inputs);
    expect(performance.now() - t).toBeLessThan(2000);
    expect(r[0]).toEqual({ url: 's3://kek/set0', bytes: 400, objects: 400 });
    expect(r[999]!.bytes).toBe(0);
  });
});
