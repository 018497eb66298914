// docs/SEMANTICS.md, "Unfinished multipart uploads": an abort the server did not take is tried
// "once more at unmount, and only then left, with a warning", and the whole stop is bounded by
// --shutdown-timeout. With the server stalled at unmount, pending aborts (and a start-up listing
// of uploads still under way) must neither hold the process past that deadline nor leave without
// the warning that names each upload.
//
// Through a real mount over MinIO: a relay refuses the aborts while eight files are removed while
// their parts stream, then MinIO is stopped (SIGSTOP) and the mount gets SIGTERM.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import type { MinioServer } from '../../helpers/minio.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { isAbort, logLines, startRelay } from './abort-harness.ts';
import { type Bucket, stoppableMinio } from './hidden-harness.ts';
import { ACCESS_DENIED, driver, O_RDWR_CREAT_TRUNC } from './rmopen-harness.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();
const minio = await minioAvailable();
const MiB = 1024 * 1024;
const PENDING = 8;

describe.skipIf(!fuse.ok || !minio.ok)('the last tries of refused aborts at unmount, the server stalled', () => {
  let server: MinioServer;
  let bucket: Bucket;
  let url: string;
  let refuse = false;
  let hangListing = false;
  beforeAll(async () => {
    ({ server, bucket } = await stoppableMinio(`abort-stalled-${process.pid}`));
    url = (
      await startRelay(server.endpoint, (method, _p, q) => {
        if (hangListing && method === 'GET' && q.has('uploads')) return 'hang';
        return refuse && isAbort(method, q) ? { status: 403, body: ACCESS_DENIED } : 'pass';
      })
    ).url;
  }, 30_000);

  // The start-up's abort of stale uploads (on by default, 24 h) is awaited by the unmount too:
  // a listing of uploads that does not come (a big bucket, a slow server) holds a mount stopped
  // right after it started for --retries × --request-timeout, whatever --shutdown-timeout says.
  it('a start-up listing of uploads that does not come does not hold the process past --shutdown-timeout', async () => {
    hangListing = true;
    try {
      const m = await mountBucket({ ...server, endpoint: url }, bucket.name, [
        '--cache-dir',
        await tempDir('abort-cache-'),
        '--request-timeout',
        '4s',
        '--retries',
        '3',
        '--shutdown-timeout',
        '1s',
      ]);
      const t0 = Date.now();
      m.child.stop('SIGTERM', 55_000).catch(() => undefined);
      const out = await Promise.race([m.child.exited, new Promise((r) => setTimeout(() => r('still running'), 40_000))]);
      const took = Date.now() - t0;
      const log = m.child.output();
      const state = { exit: out, tookMs: took, stoppedLoggedFirst: log.includes('"msg":"stopped"') };
      // Nothing was open or pending: the deadline (1 s) and slack.
      expect(state.tookMs, `${JSON.stringify(state)}\n${log.slice(-2000)}`).toBeLessThan(5000);
    } finally {
      hangListing = false;
    }
  }, 60_000);

  it(`${PENDING} pending aborts do not hold the process past --shutdown-timeout`, async () => {
    const m = await mountBucket({ ...server, endpoint: url }, bucket.name, [
      '--cache-dir',
      await tempDir('abort-cache-'),
      '--request-timeout',
      '1s',
      '--retries',
      '2',
      '--shutdown-timeout',
      '1s',
    ]);
    const cmd = driver();
    refuse = true;
    for (let i = 0; i < PENDING; i++) {
      const path = join(m.dir, `gone-${i}`);
      expect(await cmd(`open w${i} ${path} ${O_RDWR_CREAT_TRUNC}`)).toBe('OK');
      expect(await cmd(`write w${i} 65 ${20 * MiB} 0`)).toBe('OK');
      expect((await sh(`rm '${path}'`, undefined, 20_000)).code).toBe(0);
      expect(await cmd(`close w${i}`)).toBe('OK');
    }
    expect((await bucket.uploads()).length).toBe(PENDING);
    // The last tries now reach the server, which is stalled.
    refuse = false;
    process.kill(server.child.pid, 'SIGSTOP');
    const t0 = Date.now();
    try {
      m.child.stop('SIGTERM', 55_000).catch(() => undefined);
      const out = await Promise.race([m.child.exited, new Promise((r) => setTimeout(() => r('still running'), 40_000))]);
      const took = Date.now() - t0;
      const log = m.child.output();
      const stopped = log.indexOf('"msg":"stopped"');
      const warned = logLines(log).filter((l) => String(l.msg).includes('could not be aborted')).length;
      const state = { exit: out, tookMs: took, stoppedLoggedFirst: stopped >= 0, warnedUploads: warned };
      // 1 s of deadline, then at most one round of tries (2 × 1 s) for all of them: 8 s is generous.
      expect(state.tookMs, `${JSON.stringify(state)}\n${log.slice(-2500)}`).toBeLessThan(8000);
    } finally {
      process.kill(server.child.pid, 'SIGCONT');
    }
  }, 60_000);
});
