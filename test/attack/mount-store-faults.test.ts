// A store that misbehaves under the mount: errors must come back as errnos, never as hangs, and
// one dropped connection is retried like a 503 (`--retries`: "503 SlowDown, resets").

import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket, sh } from '../fuse/mount-helpers.ts';
import { runTeardowns } from '../helpers/cleanup.ts';
import { s3Client } from '../helpers/s3-smoke.ts';
import { startS3rver } from '../helpers/s3rver.ts';
import { startRelay } from './mount-relay.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();

describe.runIf(fuse.ok)('mount: a store that misbehaves', () => {
  it('answers an errno, not a hang, when the store accepts requests and never answers', async () => {
    const s3 = await startS3rver({ buckets: ['stall'] });
    const relay = await startRelay(s3);
    const m = await mountBucket(relay.server, 'stall', ['--retries', '1']);
    relay.mode = { kind: 'stall' };
    // A request the mount has passed to its daemon cannot be interrupted, even by SIGKILL: the
    // caller waits until the daemon answers. So the bound is the mount's own, measured from here;
    // the teardown kills the mount, which releases the caller.
    const stat = sh(`stat '${m.dir}/never-seen'`, undefined, 300_000);
    const late = new Promise<'hung'>((r) => setTimeout(() => r('hung'), 40_000));
    const r = await Promise.race([stat, late]);
    expect(r, 'stat of a new name still blocked after 40 s of a stalled store').not.toBe('hung');
    if (r !== 'hung') expect(r.out).toMatch(/Input\/output error|No such file/);
  }, 60_000);

  it('retries the first GET of an open() whose body was cut once', async () => {
    const s3 = await startS3rver({ buckets: ['cut'] });
    const body = randomBytes(300_000);
    await s3Client(s3).send(new PutObjectCommand({ Bucket: 'cut', Key: 'f', Body: body }));
    const relay = await startRelay(s3);
    const m = await mountBucket(relay.server, 'cut');
    relay.mode = { kind: 'cut', bytes: 50_000, count: 1 };
    const r = await sh(`sha256sum '${m.dir}/f'`);
    const want = createHash('sha256').update(body).digest('hex');
    expect(r.code, r.out).toBe(0);
    expect(r.out.split(' ')[0]).toBe(want);
  });

  it('does not publish a file after its close() answered EIO', async () => {
    const s3 = await startS3rver({ buckets: ['late'] });
    const relay = await startRelay(s3);
    const m = await mountBucket(relay.server, 'late', ['--retries', '2']);
    relay.mode = { kind: 'status', status: 503, method: 'PUT' };
    const r = await sh(`python3 -c '
import os, sys
fd = os.open(sys.argv[1] + "/f", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"x" * 1000)
try:
    os.close(fd)
    print("closed")
except OSError as e:
    print("errno", e.errno)
' '${m.dir}'`);
    expect(r.out.trim()).toBe('errno 5');
    // The writer was told the file was not stored (docs/ERRORS.md, ESTUARY_FS_UPLOAD_FAILED) and
    // holds no descriptor; the store recovers.
    relay.mode = { kind: 'pass' };
    await new Promise((res) => setTimeout(res, 3000));
    const head = await s3Client(s3)
      .send(new HeadObjectCommand({ Bucket: 'late', Key: 'f' }))
      .then(() => 'exists', () => 'absent');
    expect(head, 'the object after a close() that answered EIO').toBe('absent');
  });
});
