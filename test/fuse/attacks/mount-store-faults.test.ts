// A store that misbehaves under the mount: errors must come back as errnos, never as hangs, and
// one dropped connection is retried like a 503 (`--retries`: "503 SlowDown, resets").

import { GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { s3Client } from '../../helpers/s3-smoke.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { startRelay } from './mount-relay.ts';

async function waitForObject(s3: Parameters<typeof s3Client>[0], bucket: string, key: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const got = await s3Client(s3)
      .send(new GetObjectCommand({ Bucket: bucket, Key: key }))
      .then((r) => r.Body!.transformToString(), () => undefined);
    if (got !== undefined) return got;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${key} never appeared in ${bucket}`);
}

afterAll(runTeardowns);

const fuse = fuseAvailable();

describe.runIf(fuse.ok)('mount: a store that misbehaves', () => {
  it('answers an errno, not a hang, when the store accepts requests and never answers', async () => {
    const s3 = await startS3rver({ buckets: ['stall'] });
    const relay = await startRelay(s3);
    const m = await mountBucket(relay.server, 'stall', ['--retries', '2', '--request-timeout', '1s']);
    relay.mode = { kind: 'stall' };
    // A request the mount has passed to its daemon cannot be interrupted, even by SIGKILL: the
    // caller waits until the daemon answers. So the bound is the mount's own, measured from here;
    // the teardown kills the mount, which releases the caller. Two attempts of 1 s idle each, with
    // the SDK's backoff between them: well under 20 s even on a loaded machine.
    const started = Date.now();
    const stat = sh(`stat '${m.dir}/never-seen'`, undefined, 300_000);
    const late = new Promise<'hung'>((r) => setTimeout(() => r('hung'), 20_000));
    const r = await Promise.race([stat, late]);
    expect(r, 'stat of a new name still blocked after 20 s of a stalled store').not.toBe('hung');
    if (r !== 'hung') expect(r.out).toMatch(/Input\/output error/);
    // Both attempts were made: the timeout is retried like a reset.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
  }, 60_000);

  it('with --write-back, SIGTERM ends a mount whose uploads stall, and the journal keeps the file', async () => {
    const s3 = await startS3rver({ buckets: ['stallwb'] });
    const relay = await startRelay(s3);
    const cacheDir = await tempDir('estuary-wb-stall-');
    const args = ['--write-back', '--cache-dir', cacheDir, '--request-timeout', '1s', '--retries', '1'];
    const m = await mountBucket(relay.server, 'stallwb', [...args, '--shutdown-timeout', '2s']);
    relay.mode = { kind: 'stall', method: 'PUT' };
    const w = await sh(`echo kept > '${m.dir}/f'`);
    expect(w.code, w.out).toBe(0);
    const started = Date.now();
    m.child.proc.kill('SIGTERM');
    const code = await Promise.race([m.child.exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 30_000))]);
    expect(code, 'the mount still running 30 s after SIGTERM').not.toBe('hung');
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(m.child.output()).toContain('ESTUARY_FS_JOURNAL_KEPT');
    // The store is back: the next mount uploads what the journal kept.
    relay.mode = { kind: 'pass' };
    await mountBucket(relay.server, 'stallwb', args);
    const body = await waitForObject(s3, 'stallwb', 'f');
    expect(body).toBe('kept\n');
  }, 90_000);

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
