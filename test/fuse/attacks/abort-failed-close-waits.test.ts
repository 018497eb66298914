// docs/SEMANTICS.md, "Unfinished multipart uploads": an upload given up by a failed close is
// aborted at once, and tried again later when the server does not take it. The writer's close()
// answers EIO once the upload has failed; it does not also wait out the abort's attempts.
//
// Through a real mount over MinIO, stopped (SIGSTOP) while a 40 MiB stream is open; the close is
// timed with --request-timeout 3s --retries 2.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { type MinioServer, minioAvailable } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, mountBucket } from '../mount-helpers.ts';
import { isAbort, startRelay } from './abort-harness.ts';
import { type Bucket, stoppableMinio } from './hidden-harness.ts';
import { driver, O_RDWR_CREAT_TRUNC } from './rmopen-harness.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();
const minio = await minioAvailable();
const MiB = 1024 * 1024;

describe.skipIf(!fuse.ok || !minio.ok)('the close of a stream the stalled store did not take', () => {
  let server: MinioServer;
  let bucket: Bucket;
  beforeAll(async () => {
    ({ server, bucket } = await stoppableMinio(`abort-closewait-${process.pid}`));
  }, 30_000);

  it('answers EIO without waiting out the abort\'s own retries', async () => {
    const relay = await startRelay(server.endpoint, () => 'pass');
    const m = await mountBucket({ ...server, endpoint: relay.url }, bucket.name, [
      '--cache-dir',
      await tempDir('abort-cache-'),
      '--request-timeout',
      '3s',
      '--retries',
      '2',
    ]);
    const cmd = driver();
    expect(await cmd(`open w ${join(m.dir, 'stalled')} ${O_RDWR_CREAT_TRUNC}`)).toBe('OK');
    expect(await cmd(`write w 65 ${40 * MiB} 0`)).toBe('OK');
    process.kill(server.child.pid, 'SIGSTOP');
    const t0 = Date.now();
    let closed: string;
    try {
      closed = await cmd('close w');
    } finally {
      process.kill(server.child.pid, 'SIGCONT');
    }
    const tookMs = Date.now() - t0;
    const abortsAtMs = relay.seen.filter((s) => isAbort(s.method, s.query)).map((s) => s.at - t0);
    const state = { closed, tookMs, abortsAtMs };
    expect(closed, JSON.stringify(state)).toBe('ERR Input/output error');
    // The upload's own failure: 2 attempts × 3 s plus backoff. Waiting out the abort's 2 × 3 s
    // on top makes it over 12 s.
    expect(tookMs, JSON.stringify(state)).toBeLessThan(9500);
    await m.child.stop('SIGTERM', 30_000);
  }, 60_000);
});
