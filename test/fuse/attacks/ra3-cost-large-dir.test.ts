// Readahead across files in a large directory, walked in listing order (find -exec cat, tar c,
// rsync): at every open the mount works out the walker's order (Reads.noteWalk) and, while the
// file is read, the next file to guess (guessNext). A lookup that passes over the listing from
// its first entry to the current name costs O(position) per file, so a walk of n files O(n^2):
// at 80,000 files the last 800 cost 3.4 ms CPU each against 0.7 ms for the first. Here with
// 5,000 files, to keep the suite short; the unit test "finds the next file of a walk without
// passing over the listing again" (test/fuse/fs/filesystem.test.ts) counts the passes.
//
// Promise (docs/SEMANTICS.md, "read, across files"): the next file comes "from the cached listing,
// never an extra LIST"; the feature is there to keep the link busy, and a file near the end of a
// large directory should cost the mount no more CPU than one near its start.

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket } from '../mount-helpers.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { cpuSeconds, Other, startDriver } from './ra3-lib.ts';

const fuse = fuseAvailable();
const minio = await minioAvailable();
const FILES = 5_000;
const WALK = 400;

describe.runIf(fuse.ok && minio.ok)('readahead across files in a directory of 5,000 files', () => {
  it('a file near the end of the listing costs the mount no more CPU than one near the start', { timeout: 900_000 }, async () => {
    const server = await startMinio({ buckets: ['ra3'] });
    const other = new Other(server, 'ra3');
    const body = randomBytes(2048);
    const names = Array.from({ length: FILES }, (_, i) => `f${String(i).padStart(6, '0')}`);
    for (let i = 0; i < FILES; i += 64) await Promise.all(names.slice(i, i + 64).map((n) => other.put(`d/${n}`, body)));
    const m = await mountBucket(server, 'ra3', ['--cache-ttl', '30m']);
    const d = await startDriver();
    const listed = await d.cmd({ op: 'listdir', path: `${m.dir}/d` }, 300_000);
    expect(listed.names?.length).toBe(FILES);
    const walk = async (part: string[]) => {
      const cpu = cpuSeconds(m.child.pid);
      const t = Date.now();
      for (const n of part) {
        const got = await d.cmd({ op: 'readall', path: `${m.dir}/d/${n}` });
        if (got.err) throw new Error(`${n}: ${got.err}`);
      }
      return { cpu: cpuSeconds(m.child.pid) - cpu, ms: Date.now() - t };
    };
    // Warm up (JIT, connections), then the first and the last WALK files, in listing order.
    await walk(names.slice(WALK, 2 * WALK));
    const first = await walk(names.slice(0, WALK));
    const last = await walk(names.slice(FILES - WALK));
    const per = (x: { cpu: number; ms: number }) => `${((x.cpu / WALK) * 1000).toFixed(2)} ms CPU, ${(x.ms / WALK).toFixed(2)} ms wall per file`;
    console.log(`first ${WALK}: ${per(first)}; last ${WALK}: ${per(last)}`);
    expect(last.cpu, `first ${WALK}: ${per(first)}; last ${WALK}: ${per(last)}`).toBeLessThan(2 * first.cpu);
  });
});
