// Attack on "a crash (kill -9 of the mount) never leaves a partial object, and never loses a file
// whose removal failed and whose writer had closed successfully" (docs/SEMANTICS.md "unlink",
// "After a crash", "Write-back"), through real mounts of MinIO remounted on the same --cache-dir:
//  - --write-back: rm fails (MinIO stopped), the writer closes (into the journal), kill -9 with
//    MinIO still stopped; MinIO back, remount: the journal must publish the file.
//  - --write-back: the writer's fsync waits in the journal (MinIO stopped) when rm comes: the rm
//    may wait, but once it succeeded nothing of the file may reach the bucket, remount included.
//  - default mode: kill -9 right after a successful rm of a 40 MiB stream whose parts had left:
//    no object, before or after a remount.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { type MinioServer, minioAvailable, startMinio } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { Bucket, sha256 } from './hidden-harness.ts';
import { driver, O_RDWR_CREAT_TRUNC } from './rmopen-harness.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();
const minio = await minioAvailable();

const MiB = 1024 * 1024;

describe.skipIf(!fuse.ok || !minio.ok)('kill -9 of the mount around the removal of a file open for writing', () => {
  let server: MinioServer;
  beforeAll(async () => {
    server = await startMinio();
    onTeardown(() => {
      process.kill(server.child.pid, 'SIGCONT');
    });
  }, 30_000);

  async function fresh(name: string, extra: string[]) {
    const bucket = new Bucket(server, `rmopen-${name}-${process.pid}`);
    await bucket.create();
    const cache = await tempDir('rmopen-cache-');
    const args = ['--cache-dir', cache, '--request-timeout', '1s', '--retries', '1', ...extra];
    const m = await mountBucket(server, bucket.name, args);
    const kill = async () => {
      m.child.proc.kill('SIGKILL');
      await m.child.exited;
      await sh(`fusermount -uz '${m.dir}' || umount -l '${m.dir}'`);
    };
    return { bucket, m, args, kill };
  }

  async function until(check: () => Promise<boolean>, ms: number): Promise<boolean> {
    const end = Date.now() + ms;
    for (;;) {
      if (await check()) return true;
      if (Date.now() > end) return false;
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it('write-back: a failed rm, the writer\'s close, kill -9: the remount publishes the file', async () => {
    const { bucket, m, args, kill } = await fresh('wbfail', ['--write-back']);
    const cmd = driver();
    const path = join(m.dir, 'f');
    expect(await cmd(`open w ${path} ${O_RDWR_CREAT_TRUNC}`)).toBe('OK');
    expect(await cmd('write w 65 200000 0')).toBe('OK');
    expect(await cmd('fsync w')).toBe('OK');
    expect(await until(async () => (await bucket.keys()).includes('f'), 10_000)).toBe(true);
    // Dirty again while MinIO runs (the write reads the published bytes back into a local copy).
    expect(await cmd('write w 66 5000 200000')).toBe('OK');
    await sh(`ls -la '${m.dir}'`);
    process.kill(server.child.pid, 'SIGSTOP');
    let rm: { code: number; out: string };
    let close: string;
    try {
      rm = await sh(`rm '${path}'`, undefined, 20_000);
      expect(await cmd('write w 67 3000 205000')).toBe('OK');
      close = await cmd('close w');
      await kill();
    } finally {
      process.kill(server.child.pid, 'SIGCONT');
    }
    const again = await mountBucket(server, bucket.name, args);
    const whole = Buffer.concat([Buffer.alloc(200000, 65), Buffer.alloc(5000, 66), Buffer.alloc(3000, 67)]);
    const done = await until(async () => (await bucket.sha('f')) === sha256(whole), 15_000);
    const state = { rm: rm.code === 0 ? 'ok' : rm.out.trim(), close, keys: await bucket.keys(), sha: await bucket.sha('f'), listed: (await sh(`ls '${again.dir}'`)).out.trim() };
    if (rm.code === 0) {
      expect(await until(async () => (await bucket.keys()).length === 0, 5000)).toBe(true);
      return;
    }
    if (close === 'OK') expect({ done, listed: state.listed }).toEqual({ done: true, listed: 'f' });
  }, 40_000);

  it('write-back: rm while the writer\'s fsync waits in the journal; once it succeeded nothing comes back', async () => {
    const { bucket, m, args, kill } = await fresh('wbpend', ['--write-back']);
    const cmd = driver();
    const path = join(m.dir, 'g');
    await sh(`ls -la '${m.dir}'`);
    process.kill(server.child.pid, 'SIGSTOP');
    let stopped = true;
    try {
      expect(await cmd(`open w ${path} ${O_RDWR_CREAT_TRUNC}`)).toBe('OK');
      expect(await cmd('write w 65 200000 0')).toBe('OK');
      expect(await cmd('fsync w')).toBe('OK');
      const started = Date.now();
      const rmP = sh(`rm '${path}'`, undefined, 25_000);
      await new Promise((r) => setTimeout(r, 3000));
      process.kill(server.child.pid, 'SIGCONT');
      stopped = false;
      const rm = await rmP;
      const took = Date.now() - started;
      expect(await cmd('write w 66 5000 200000')).toBe('OK');
      const close = await cmd('close w');
      await kill();
      const again = await mountBucket(server, bucket.name, args);
      await new Promise((r) => setTimeout(r, 4000));
      const state = { rm: rm.code === 0 ? 'ok' : rm.out.trim(), took, close, keys: await bucket.keys(), listed: (await sh(`ls '${again.dir}'`)).out.trim() };
      if (rm.code === 0) expect({ keys: state.keys, listed: state.listed }).toEqual({ keys: [], listed: '' });
      else expect(state.keys).toEqual(['g']);
    } finally {
      if (stopped) process.kill(server.child.pid, 'SIGCONT');
    }
  }, 40_000);

  it('kill -9 right after a successful rm of a 40 MiB stream: no object, remount included', async () => {
    const { bucket, m, args, kill } = await fresh('big', []);
    const cmd = driver();
    const path = join(m.dir, 'big');
    expect(await cmd(`open w ${path} ${O_RDWR_CREAT_TRUNC}`)).toBe('OK');
    expect(await cmd(`write w 65 ${40 * MiB} 0`)).toBe('OK');
    const rm = await sh(`rm '${path}'`, undefined, 20_000);
    expect(rm.code, rm.out).toBe(0);
    expect(await cmd(`write w 66 ${MiB} ${40 * MiB}`)).toBe('OK');
    await kill();
    const keysAfterKill = await bucket.keys();
    const again = await mountBucket(server, bucket.name, args);
    await new Promise((r) => setTimeout(r, 2000));
    const state = { keysAfterKill, keys: await bucket.keys(), uploads: await bucket.uploads(), listed: (await sh(`ls '${again.dir}'`)).out.trim() };
    expect({ keysAfterKill, keys: state.keys, listed: state.listed }).toEqual({ keysAfterKill: [], keys: [], listed: '' });
  }, 40_000);
});
