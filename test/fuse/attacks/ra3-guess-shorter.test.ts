// Readahead across files (docs/SEMANTICS.md, "read, across files") when the next file was
// replaced by another client with a SHORTER object after this mount listed the directory (the
// listing is trusted for --cache-ttl; "stat may show an old size until then or until the file is
// opened"). The guess is sized from the listing, so its GETs ask past the new end of the object
// (here bytes 9-17 MiB of a 10 MiB object); the open's HEAD agrees with the guess's first GET
// (both see the new object), so the guess is taken with a readahead chunk that failed as "ends
// before the size open() saw".
//
// Promise pinned (passes): close-to-open, the open after the replacement reads the new object
// whole, and a guess costs nothing but bytes. It holds today only because the kernel retries a
// failed readahead page by page: the mount then answers the last MiB with one 4 KiB GET per page
// (32 GETs seen through a relay), the cost of the failed chunk; no read fails.

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket } from '../mount-helpers.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { MiB, mibDigests, startDriver, walkBucket } from './ra3-lib.ts';

const fuse = fuseAvailable();
const minio = await minioAvailable();

const A = randomBytes(20 * MiB);
const B = randomBytes(10 * MiB);

async function setUp() {
  const { server, other } = await walkBucket(A);
  const m = await mountBucket(server, 'ra3');
  const d = await startDriver();
  // The walker lists the directory (cp -r, tar and rsync all do): f2 is 20 MiB in that listing.
  expect((await d.cmd({ op: 'listdir', path: `${m.dir}/d` })).names?.sort()).toEqual(['a0', 'a1', 'f1', 'f2']);
  // Another host replaces f2 with a 10 MiB object.
  await other.put('d/f2', B);
  return { m, d };
}

describe.runIf(fuse.ok && minio.ok)('readahead across files: the next file became shorter', () => {
  it('a walker that read a0, a1, f1 whole reads the new, shorter f2 whole', async () => {
    const { m, d } = await setUp();
    for (const f of ['a0', 'a1', 'f1']) expect((await d.cmd({ op: 'readall', path: `${m.dir}/d/${f}` })).err).toBeUndefined();
    const got = await d.cmd({ op: 'readall', path: `${m.dir}/d/f2` });
    expect(got.err, `reading f2 (opened after it was replaced) failed at byte ${got.pos}: ${got.err}\n${m.child.output().slice(-2000)}`).toBeUndefined();
    expect(got.size).toBe(B.length);
    expect(got.mibs).toEqual(mibDigests(B));
  });

  it('control: the same open without a walk before it reads the new f2', async () => {
    const { m, d } = await setUp();
    const got = await d.cmd({ op: 'readall', path: `${m.dir}/d/f2` });
    expect(got.err).toBeUndefined();
    expect(got.mibs).toEqual(mibDigests(B));
  });
});
