// Attack on the removal of files open for writing with MinIO stopped (SIGSTOP) for the DELETE,
// through a real mount (docs/SEMANTICS.md "unlink", "close (flush) and fsync"): a removal the
// bucket did not answer fails with EIO and changes nothing; the writers go on and their close
// publishes the file, or says it could not. Cases: a writer whose parts are in flight (a 40 MiB
// stream), two processes writing one file, and a writer that had published (fsync) and writes
// nothing more (MinIO may still carry the DELETE out once it runs again).

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { type MinioServer, minioAvailable } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { Bucket, sha256, stoppableMinio } from './hidden-harness.ts';
import { driver, O_RDWR_CREAT_TRUNC, O_RDWR } from './rmopen-harness.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();
const minio = await minioAvailable();

const MiB = 1024 * 1024;

describe.skipIf(!fuse.ok || !minio.ok)('rm of files open for writing while MinIO is stopped', () => {
  let server: MinioServer;
  let bucket: Bucket;
  let dir: string;
  beforeAll(async () => {
    ({ server, bucket } = await stoppableMinio(`rmopen-stop-${process.pid}`));
    const cache = await tempDir('rmopen-cache-');
    dir = (await mountBucket(server, bucket.name, ['--cache-dir', cache, '--request-timeout', '1s', '--retries', '1'])).dir;
  }, 30_000);

  /** rm with MinIO stopped for its duration. */
  async function rmStopped(path: string) {
    await sh(`ls -la '${dir}'`, undefined, 20_000);
    process.kill(server.child.pid, 'SIGSTOP');
    try {
      return await sh(`rm '${path}'`, undefined, 25_000);
    } finally {
      process.kill(server.child.pid, 'SIGCONT');
    }
  }

  async function check(name: string, rm: { code: number; out: string }, closes: string[], whole: Buffer) {
    const listed = (await sh(`ls '${dir}'`, undefined, 20_000)).out.split('\n').filter((n) => n === name);
    const keys = (await bucket.keys()).filter((k) => k === name);
    const state = { rm: rm.code === 0 ? 'ok' : rm.out.trim(), closes, listed, keys, sha: await bucket.sha(name), uploads: await bucket.uploads() };
    if (rm.code === 0) {
      expect({ keys, listed }).toEqual({ keys: [], listed: [] });
      return;
    }
    // The rm failed: a close that said OK published everything; one that failed said so.
    if (closes.every((c) => c === 'OK')) expect({ keys, sha: state.sha, listed }).toEqual({ keys: [name], sha: sha256(whole), listed: [name] });
    else expect(closes.some((c) => c.startsWith('ERR'))).toBe(true);
  }

  it('a 40 MiB stream with parts in flight', async () => {
    const cmd = driver();
    const path = join(dir, 'big');
    expect(await cmd(`open w ${path} ${O_RDWR_CREAT_TRUNC}`)).toBe('OK');
    expect(await cmd(`write w 65 ${40 * MiB} 0`)).toBe('OK');
    const rm = await rmStopped(path);
    const written = await cmd(`write w 66 ${MiB} ${40 * MiB}`);
    const close = await cmd('close w');
    await check('big', rm, [written === 'OK' ? close : written], Buffer.concat([Buffer.alloc(40 * MiB, 65), Buffer.alloc(MiB, 66)]));
  }, 40_000);

  it('two processes writing one file', async () => {
    const one = driver();
    const two = driver();
    const path = join(dir, 'shared');
    expect(await one(`open w ${path} ${O_RDWR_CREAT_TRUNC}`)).toBe('OK');
    expect(await one('write w 65 300000 0')).toBe('OK');
    expect(await two(`open w ${path} ${O_RDWR}`)).toBe('OK');
    expect(await two('write w 66 100000 300000')).toBe('OK');
    const rm = await rmStopped(path);
    const w1 = await one('write w 67 1000 400000');
    const c2 = await two('close w');
    const c1 = await one('close w');
    const whole = Buffer.concat([Buffer.alloc(300000, 65), Buffer.alloc(100000, 66), Buffer.alloc(1000, 67)]);
    await check('shared', rm, [w1 === 'OK' ? c1 : w1, c2], whole);
  }, 40_000);

  it('a writer that published (fsync) and writes nothing more', async () => {
    const cmd = driver();
    const path = join(dir, 'synced');
    expect(await cmd(`open w ${path} ${O_RDWR_CREAT_TRUNC}`)).toBe('OK');
    expect(await cmd('write w 65 300000 0')).toBe('OK');
    expect(await cmd('fsync w')).toBe('OK');
    const rm = await rmStopped(path);
    // MinIO runs again: give a DELETE it received while stopped the time to land.
    await new Promise((r) => setTimeout(r, 1500));
    const close = await cmd('close w');
    await check('synced', rm, [close], Buffer.alloc(300000, 65));
  }, 40_000);
});
