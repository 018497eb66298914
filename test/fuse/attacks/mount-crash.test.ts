// kill -9 of the mount while a file that already existed is open for writing: the bucket must
// keep what it held before that file (docs/SEMANTICS.md, first tenet, "After a crash").

import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { s3Client } from '../../helpers/s3-smoke.ts';
import { startS3rver } from '../../helpers/s3rver.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();

async function keys(server: Parameters<typeof s3Client>[0], bucket: string): Promise<string[]> {
  const r = await s3Client(server).send(new ListObjectsV2Command({ Bucket: bucket }));
  return (r.Contents ?? []).map((o) => o.Key!).sort();
}

describe.runIf(fuse.ok)('mount: kill -9 with a renamed file still open for writing', () => {
  it('leaves the old object (under the old or the new name), never nothing', async () => {
    const server = await startS3rver({ buckets: ['crash'] });
    const client = s3Client(server);
    await client.send(new PutObjectCommand({ Bucket: 'crash', Key: 'keep', Body: 'precious old content' }));
    const m = await mountBucket(server, 'crash');
    // An editor-like writer: open the existing file, append, rename it, and the mount dies
    // before close().
    const script = `
import os, sys
M=sys.argv[1]
fd=os.open(M+'/keep', os.O_WRONLY)
os.lseek(fd, 0, 2)
os.write(fd, b' + appended')
os.rename(M+'/keep', M+'/kept')
os.kill(int(sys.argv[2]), 9)
`;
    const r = await sh(`python3 -c "$S" '${m.dir}' ${m.child.pid}`.replace('$S', script.replace(/"/g, '\\"')));
    expect(r.code, r.out).toBe(0);
    await m.child.exited;
    const left = await keys(server, 'crash');
    // Before the file was closed the bucket held 'keep' with its old content; a crash must not
    // leave less than that.
    expect(left.length, `keys left after the crash: ${JSON.stringify(left)}`).toBe(1);
    const body = await client.send(new GetObjectCommand({ Bucket: 'crash', Key: left[0]! }));
    expect(await body.Body!.transformToString()).toBe('precious old content');
  });
});
