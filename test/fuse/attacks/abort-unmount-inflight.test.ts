// docs/SEMANTICS.md, "Unfinished multipart uploads": an upload the mount gives up (a removed file
// whose parts had left, a rename of it, a write out of order, the upload started ahead of a file
// that then went up in one PUT) "is aborted at once; when the server does not take that abort, it
// is tried again ... and once more at unmount, and only then left, with a warning". That holds
// for an abort whose first try (or the CreateMultipartUpload it waits on) is still under way when
// the mount stops: it is aborted, or named in a warning, never dropped unannounced.
//
// Through a real mount over MinIO behind a relay that is slow, or answers 503 SlowDown, on exactly
// those requests, then SIGTERM shortly after.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { type MinioServer, minioAvailable } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { isAbort, isCreate, logLines, SLOW_DOWN, relayedMinio, startRelay, type Verdict } from './abort-harness.ts';
import { Bucket, eventually } from './hidden-harness.ts';
import { driver, O_RDWR_CREAT_TRUNC } from './rmopen-harness.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();
const minio = await minioAvailable();
const MiB = 1024 * 1024;

describe.skipIf(!fuse.ok || !minio.ok)('aborts under way when the mount stops', () => {
  let server: MinioServer;
  let bucket: Bucket;
  let url: string;
  let relay: Awaited<ReturnType<typeof startRelay>>;
  let decide: (method: string, query: URLSearchParams) => Verdict = () => 'pass';
  beforeAll(async () => {
    ({ server, bucket, relay } = await relayedMinio('abort-inflight', (m, q) => decide(m, q)));
    url = relay.url;
  }, 30_000);

  /** The upload of `key` is gone, or a warning names it (the documented "left, with a warning"). */
  function leftSilently(key: string, uploads: string[], output: string): boolean {
    if (!uploads.includes(key)) return false;
    return !logLines(output).some((l) => JSON.stringify(l).includes(key));
  }

  /** A 24 MiB stream (parts sent) removed while open: its upload is given up. */
  async function streamAndRemove(dir: string, name: string, verdict: () => Verdict) {
    const cmd = driver();
    const path = join(dir, name);
    expect(await cmd(`open w ${path} ${O_RDWR_CREAT_TRUNC}`)).toBe('OK');
    expect(await cmd(`write w 65 ${24 * MiB} 0`)).toBe('OK');
    expect(await eventually(async () => (await bucket.uploads()).includes(name), 10_000)).toBe(true);
    decide = (method, q) => (isAbort(method, q) ? verdict() : 'pass');
    expect((await sh(`rm '${path}'`, undefined, 20_000)).code).toBe(0);
    expect(await cmd('close w')).toBe('OK');
  }

  it('rm of a streaming file, its abort answered 503 SlowDown, then SIGTERM: the upload is aborted or named in a warning', async () => {
    decide = () => 'pass';
    const m = await mountBucket({ ...server, endpoint: url }, bucket.name, ['--cache-dir', await tempDir('abort-cache-'), '--shutdown-timeout', '2s']);
    // The server sheds load (503 SlowDown) until the unmount; from then on it takes every abort.
    let slowing = true;
    await streamAndRemove(m.dir, 'slowed', () => (slowing ? { status: 503, body: SLOW_DOWN } : 'pass'));
    const stopping = m.child.stop('SIGTERM', 30_000);
    slowing = false;
    expect(await stopping).toBe(0);
    await new Promise((r) => setTimeout(r, 1000));
    const uploads = await bucket.uploads();
    expect(
      leftSilently('slowed', uploads, m.child.output()),
      `uploads after unmount: ${JSON.stringify(uploads)}; log tail:\n${m.child.output().slice(-2500)}`,
    ).toBe(false);
  }, 60_000);

  it('rm of a streaming file during an outage (the abort gets no answer), then SIGTERM: the upload is aborted or named in a warning', async () => {
    decide = () => 'pass';
    const m = await mountBucket({ ...server, endpoint: url }, bucket.name, ['--cache-dir', await tempDir('abort-cache-'), '--shutdown-timeout', '2s']);
    await streamAndRemove(m.dir, 'outage', () => 'hang');
    await new Promise((r) => setTimeout(r, 1000));
    expect(await m.child.stop('SIGTERM', 30_000)).toBe(0);
    decide = () => 'pass';
    const uploads = await bucket.uploads();
    expect(
      leftSilently('outage', uploads, m.child.output()),
      `uploads after unmount: ${JSON.stringify(uploads)}; log tail:\n${m.child.output().slice(-2500)}`,
    ).toBe(false);
  }, 60_000);

  it('a small file after a big one: its upload started ahead, answered late: aborted or named in a warning at unmount', async () => {
    decide = () => 'pass';
    const m = await mountBucket({ ...server, endpoint: url }, bucket.name, ['--cache-dir', await tempDir('abort-cache-'), '--shutdown-timeout', '2s']);
    // A big file first: the mount now starts the next file's multipart upload at its first write.
    expect((await sh(`head -c ${24 * MiB} /dev/zero > '${join(m.dir, 'big')}'`)).code).toBe(0);
    // The server is slow to answer CreateMultipartUpload (it has created the upload already).
    decide = (method, q) => (isCreate(method, q) ? { lateMs: 2500 } : 'pass');
    const cmd = driver();
    expect(await cmd(`open s ${join(m.dir, 'small')} ${O_RDWR_CREAT_TRUNC}`)).toBe('OK');
    expect(await cmd('write s 115 5 0')).toBe('OK');
    expect(await cmd('close s')).toBe('OK');
    expect(await bucket.body('small')).toEqual(Buffer.from('sssss'));
    // The upload started ahead of the file's first part exists on the server...
    expect(await bucket.uploads(), JSON.stringify(relay.seen.map((x) => [x.method, x.path, x.query.toString(), x.fate]))).toContain('small');
    // ...and the user unmounts at once.
    expect(await m.child.stop('SIGTERM', 30_000)).toBe(0);
    decide = () => 'pass';
    // Whatever the relay still holds comes through now; give it the time to.
    await new Promise((r) => setTimeout(r, 3000));
    const uploads = await bucket.uploads();
    expect(
      leftSilently('small', uploads, m.child.output()),
      `uploads after unmount: ${JSON.stringify(uploads)}; log tail:\n${m.child.output().slice(-2500)}`,
    ).toBe(false);
  }, 60_000);

  it('a streamed file renamed while open: the abort of its old upload, held up, is named in a warning at unmount, not dropped', async () => {
    decide = () => 'pass';
    const m = await mountBucket({ ...server, endpoint: url }, bucket.name, ['--cache-dir', await tempDir('abort-cache-'), '--shutdown-timeout', '2s']);
    const cmd = driver();
    const from = join(m.dir, 'streamed');
    expect(await cmd(`open w ${from} ${O_RDWR_CREAT_TRUNC}`)).toBe('OK');
    expect(await cmd(`write w 66 ${40 * MiB} 0`)).toBe('OK');
    // Parts have left: the upload of `streamed` exists.
    expect(await eventually(async () => (await bucket.uploads()).includes('streamed'), 10_000)).toBe(true);
    // The abort of that upload is held up on the way (a slow link or server): 3 s.
    decide = (method, q) => (isAbort(method, q) ? { holdMs: 3000 } : 'pass');
    expect((await sh(`mv '${from}' '${join(m.dir, 'moved')}'`, undefined, 30_000)).code).toBe(0);
    expect(await cmd('close w')).toBe('OK');
    expect((await bucket.body('moved'))?.length).toBe(40 * MiB);
    expect(await m.child.stop('SIGTERM', 30_000)).toBe(0);
    decide = () => 'pass';
    await new Promise((r) => setTimeout(r, 3500));
    const uploads = await bucket.uploads();
    expect(
      leftSilently('streamed', uploads, m.child.output()),
      `uploads after unmount: ${JSON.stringify(uploads)}; log tail:\n${m.child.output().slice(-2500)}`,
    ).toBe(false);
  }, 60_000);
});
