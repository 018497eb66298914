// A user's rename to a `.fuse_hidden` name near libfuse's count, and many removals of open files
// at once, through real mounts. docs/SEMANTICS.md, "unlink.": the removal of an open file leaves
// "nothing of the file in the bucket under any name meanwhile, nor after a crash", and "a rename
// to any other name of that form is a rename like any other".

import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket, sh, type Mounted } from '../mount-helpers.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { s3Client } from '../../helpers/s3-smoke.ts';
import { startS3rver } from '../../helpers/s3rver.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();
const OPS = new URL('./hidden3-ops.py', import.meta.url).pathname;

type Server = Parameters<typeof s3Client>[0];

async function objects(server: Server, bucket: string): Promise<Map<string, string>> {
  const client = s3Client(server);
  const r = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
  const out = new Map<string, string>();
  for (const o of r.Contents ?? []) {
    const body = await client.send(new GetObjectCommand({ Bucket: bucket, Key: o.Key! }));
    out.set(o.Key!, await body.Body!.transformToString());
  }
  return out;
}

async function ops(m: Mounted, ...args: (string | number)[]): Promise<{ code: number; out: string }> {
  const [name, ...rest] = args;
  return sh(`python3 '${OPS}' ${name} '${m.dir}' ${rest.join(' ')}`, undefined, 50_000);
}

describe.runIf(fuse.ok)('mount: a user renames an open file to the .fuse_hidden name libfuse uses next', () => {
  it('keeps the user\'s file in the bucket under its new name', async () => {
    const server = await startS3rver({ buckets: ['hn1'] });
    const m = await mountBucket(server, 'hn1');
    const r = await ops(m, 'user-rename-open', 3);
    expect(r.code, r.out).toBe(0);
    const { user } = JSON.parse(r.out) as { user: string };
    const left = await objects(server, 'hn1');
    // Expected: a rename like any other, the user's bytes under the name they chose (or, if the
    // mount refuses such a name, still under the old one). Today the mount takes it for libfuse's
    // removal of an open file and deletes the object: the user's data is gone.
    const kept = left.get(user) ?? left.get('precious');
    expect(kept, `objects left: ${JSON.stringify([...left])}`).toBe('precious user data');
  }, 40_000);
});

describe.runIf(fuse.ok)('mount: a user\'s rename takes libfuse\'s next count, then a real removal and kill -9', () => {
  it('leaves no .fuse_hidden object of the removed file', async () => {
    const server = await startS3rver({ buckets: ['hn2'] });
    const m = await mountBucket(server, 'hn2');
    const r = await ops(m, 'user-then-real', 2, m.child.pid!);
    expect(r.code, r.out).toBe(0);
    await m.child.exited;
    const left = await objects(server, 'hn2');
    // Expected: the removed file `secret` (open when the mount died) has nothing in the bucket
    // under any name. Today its count was already taken by the user's rename, so its removal is
    // taken for a user's rename: its bytes sit in the bucket as .fuse_hidden<node><count>.
    const leaked = [...left].filter(([, v]) => v === 'removed secret bytes').map(([k]) => k);
    expect(leaked, `objects left: ${JSON.stringify([...left])}`).toEqual([]);
  }, 40_000);

  it('a user pushing the count ahead by 64s makes a real removal leave its bytes in the bucket', async () => {
    const server = await startS3rver({ buckets: ['hn3'] });
    const m = await mountBucket(server, 'hn3');
    const r = await ops(m, 'push-window', m.child.pid!);
    expect(r.code, r.out).toBe(0);
    await m.child.exited;
    const left = await objects(server, 'hn3');
    // Expected: nothing of `secret` in the bucket (SEMANTICS.md "nor after a crash").
    const leaked = [...left].filter(([, v]) => v === 'removed secret bytes').map(([k]) => k);
    expect(leaked, `objects left: ${JSON.stringify([...left])}`).toEqual([]);
  }, 40_000);
});
