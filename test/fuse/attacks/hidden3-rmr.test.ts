// rm -r of a directory holding files still open, then the descriptors; a directory removed while
// a listing of it is open. docs/SEMANTICS.md, "unlink.": `rm -r` of a directory whose file is
// still open succeeds; reads, writes, ftruncate, fsync and close through the removed file's
// descriptors keep working. A local file system also answers fstat(2), fchmod(2) and futimens(2)
// of such a descriptor (st_nlink 0), and fstat(2) of a removed directory's; libfuse 2 cannot (the
// kernel asks for them by node, and libfuse has no path for a node whose directory is gone), and
// answers ENOENT itself, as the docs say: these tests hold the mount to that.

import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { s3Client } from '../../helpers/s3-smoke.ts';
import { startS3rver } from '../../helpers/s3rver.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();
const OPS = new URL('./hidden3-ops.py', import.meta.url).pathname;

interface RmrOut {
  rm: [number, string];
  errors: string[];
  reads: (string | null)[];
  sizes: (number | null)[];
  listing?: string[];
  f0?: string;
}

async function keys(server: Parameters<typeof s3Client>[0], bucket: string): Promise<string[]> {
  const r = await s3Client(server).send(new ListObjectsV2Command({ Bucket: bucket }));
  return (r.Contents ?? []).map((o) => o.Key!).sort();
}

describe.runIf(fuse.ok)('mount: rm -r of a directory whose files are open, then their descriptors', () => {
  for (const recreate of [false, true]) {
    it(`write, ftruncate, fsync, pread and close succeed, fstat, fchmod and futimens answer ENOENT${recreate ? ' (a new directory and file of the same name made meanwhile)' : ''}`, async () => {
      const server = await startS3rver({ buckets: ['rmr'] });
      const m = await mountBucket(server, 'rmr');
      const r = await sh(`python3 '${OPS}' rmr '${m.dir}' ${recreate ? 'recreate' : 'no'}`, undefined, 40_000);
      expect(r.code, r.out).toBe(0);
      const out = JSON.parse(r.out) as RmrOut;
      expect(out.rm).toEqual([0, '']);
      // Only what libfuse itself refuses for a node with no path (docs/SEMANTICS.md, "unlink.").
      const refused = [0, 1, 2, 3, 4].flatMap((i) =>
        ['fstat', 'fchmod', 'futimens'].map((step) => `${i} ${step}: [Errno 2] No such file or directory`),
      );
      expect([...out.errors].sort()).toEqual(refused.sort());
      expect(out.sizes).toEqual([null, null, null, null, null]);
      expect(out.reads).toEqual(['old', 'old', 'old', 'old', 'old']);
      if (recreate) {
        expect(out.listing).toEqual(['f0']);
        expect(out.f0).toBe('new file');
        expect(await keys(server, 'rmr')).toEqual(['d/', 'd/sub/', 'd/sub/f0']);
      } else {
        expect(await keys(server, 'rmr')).toEqual([]);
      }
    }, 40_000);
  }
});

describe.runIf(fuse.ok)('mount: a directory removed while a listing of it is open', () => {
  it('the listing ends empty, and fstat of its descriptor answers ENOENT', async () => {
    const server = await startS3rver({ buckets: ['lsd'] });
    const m = await mountBucket(server, 'lsd');
    const r = await sh(`python3 '${OPS}' lsdir '${m.dir}' recreate`, undefined, 40_000);
    expect(r.code, r.out).toBe(0);
    const out = JSON.parse(r.out) as Record<string, unknown>;
    expect(out.readdir).toEqual([]);
    expect(out.new).toEqual(['new']);
    // A local file system answers a directory here; libfuse 2 has no path for the removed node and
    // answers ENOENT itself (docs/SEMANTICS.md, "unlink.").
    expect(String(out.fstat)).toMatch(/^error \[Errno 2\]/);
    expect(await keys(server, 'lsd')).toEqual(['e/', 'e/new']);
  }, 40_000);
});

describe.runIf(fuse.ok)('mount: rm -r of a directory whose files are being written, written on and fsynced, then kill -9', () => {
  // Holds today (a regression test): nothing of the removed files comes back, with or without
  // --write-back.
  for (const flags of [[], ['--write-back']]) {
    it(`leaves an empty bucket${flags.length ? ` (${flags.join(' ')})` : ''}`, async () => {
      const server = await startS3rver({ buckets: ['rmk'] });
      const m = await mountBucket(server, 'rmk', flags);
      const r = await sh(`python3 '${OPS}' rmr-kill '${m.dir}' ${m.child.pid}`, undefined, 40_000);
      expect(r.code, r.out).toBe(0);
      await m.child.exited;
      expect(await keys(server, 'rmk')).toEqual([]);
    }, 40_000);
  }
});

describe.runIf(fuse.ok)('mount: one file removed while open (its directory stays), then its descriptor', () => {
  // docs/SEMANTICS.md "unlink.": the descriptors keep working; fchmod, fchown and futimens
  // succeed and change nothing in the bucket. fstat shows what was changed, as a local file does.
  it('write, fstat, fchmod, fchown, futimens, ftruncate, pread, close succeed; the bucket stays empty', async () => {
    const server = await startS3rver({ buckets: ['one'] });
    const m = await mountBucket(server, 'one');
    const r = await sh(`python3 '${OPS}' unlink-fops '${m.dir}'`, undefined, 40_000);
    expect(r.code, r.out).toBe(0);
    const out = JSON.parse(r.out) as { errors: string[]; size: number; after: number[]; read: string; listing: string[] };
    expect(out.errors).toEqual([]);
    expect(out.size).toBe(6);
    expect(out.after).toEqual([0o600, 1000, 1]);
    expect(out.read).toBe('ab');
    expect(out.listing).toEqual([]);
    expect(await keys(server, 'one')).toEqual([]);
  }, 40_000);
});
