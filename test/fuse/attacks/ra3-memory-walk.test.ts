// Memory while walkers read large files one after another with readahead across files, under
// the smallest --memory-limit (64 MiB; the option refuses less). docs/SEMANTICS.md, tenet 4:
// "the mount never grows past the budget"; "Memory": the budget counts readahead (with the
// guesses of the next file: "within the memory budget") and not Node's heap, its garbage, the
// network memory kept for reuse (at most 16 MiB) or libfuse's threads; measured, a hundred readers
// grew the mount by 80–115 MiB over its resting size with a 64 MiB budget.
//
// Here: tar and cp -r, six walkers side by side (more than the four guesses held at once), over
// 64 MiB files (each as large as the budget). The growth of the mount's peak RSS over its resting size must stay within the
// same 115 MiB the docs measured for a hundred readers.

import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { MiB, memoryOf, Other } from './ra3-lib.ts';

const fuse = fuseAvailable();
const minio = await minioAvailable();

describe.runIf(fuse.ok && minio.ok)('memory of walkers over large files, --memory-limit 64MiB', () => {
  it('tar, cp -r and six walkers side by side keep the mount within the documented growth', { timeout: 600_000 }, async () => {
    const server = await startMinio({ buckets: ['ra3'] });
    const other = new Other(server, 'ra3');
    const names = ['a', 'b', 'c', 'd'];
    const bodies = names.map(() => randomBytes(64 * MiB));
    for (const [i, n] of names.entries()) await other.put(`big/${n}`, bodies[i]!);
    const md5 = createHash('md5');
    for (const b of bodies) md5.update(b);
    const all = md5.digest('hex');
    const total = bodies.length * 64 * MiB;
    const m = await mountBucket(server, 'ra3', ['--memory-limit', '64MiB']);
    await sh(`ls -l '${m.dir}/big' > /dev/null`);
    await sleep(1000);
    const rest = memoryOf(m.child.pid).rss;
    const out = await tempDir('estuary-ra3-cp-');
    const tar = await sh(`cd '${m.dir}/big' && tar c a b c d 2>/dev/null | wc -c`, undefined, 300_000);
    expect(Number(tar.out.trim()), tar.out).toBeGreaterThanOrEqual(total);
    const cp = await sh(`cp -r '${m.dir}/big' '${out}/big' && cat '${out}/big/'{a,b,c,d} | md5sum && rm -r '${out}/big'`, undefined, 300_000);
    expect(cp.out.split(' ')[0], cp.out).toBe(all);
    // Six walkers at once, each over all four files (a, b, c, d in listing order).
    const six = await sh(
      `cd '${m.dir}/big' && for i in 1 2 3 4 5 6; do (cat a b c d | md5sum) & done; wait`,
      undefined,
      300_000,
    );
    expect(six.out.trim().split('\n').map((l) => l.split(' ')[0])).toEqual(Array(6).fill(all));
    const { hwm } = memoryOf(m.child.pid);
    const growth = (hwm - rest) / MiB;
    console.log(`mount RSS at rest ${(rest / MiB).toFixed(0)} MiB, peak ${(hwm / MiB).toFixed(0)} MiB: +${growth.toFixed(0)} MiB`);
    expect(growth, `peak RSS ${(hwm / MiB).toFixed(0)} MiB over ${(rest / MiB).toFixed(0)} MiB at rest`).toBeLessThan(115);
  });
});
