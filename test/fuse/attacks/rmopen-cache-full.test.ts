// Attack on the removal of a file open for writing when the cache disk cannot keep its content
// (docs/SEMANTICS.md "unlink": "If the cache disk cannot take that copy, the log says so, later
// writes are taken and dropped"), --cache-dir on an 8 MiB tmpfs, a 24 MiB stream whose first
// part has left: a successful rm must publish nothing at close; an rm that failed (MinIO stopped)
// must leave the stream going, and its close publish everything or fail.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { type MinioServer, minioAvailable } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { Bucket, sha256, stoppableMinio } from './hidden-harness.ts';
import { driver, O_RDWR_CREAT_TRUNC } from './rmopen-harness.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();
const minio = await minioAvailable();

const MiB = 1024 * 1024;

describe.skipIf(!fuse.ok || !minio.ok || process.getuid?.() !== 0)('rm of a streamed file with a full cache disk', () => {
  let server: MinioServer;
  let bucket: Bucket;
  let dir: string;
  beforeAll(async () => {
    ({ server, bucket } = await stoppableMinio(`rmopen-full-${process.pid}`));
    const cache = await tempDir('rmopen-tmpfs-');
    const m = await sh(`mount -t tmpfs -o size=8m tmpfs '${cache}'`);
    expect(m.code, m.out).toBe(0);
    onTeardown(async () => {
      await sh(`umount -l '${cache}'`);
    });
    dir = (await mountBucket(server, bucket.name, ['--cache-dir', cache, '--request-timeout', '1s', '--retries', '1'])).dir;
  }, 30_000);

  it('a successful rm: the writes go on, nothing is published', async () => {
    const cmd = driver();
    const path = join(dir, 'ok');
    expect(await cmd(`open w ${path} ${O_RDWR_CREAT_TRUNC}`)).toBe('OK');
    expect(await cmd(`write w 65 ${24 * MiB} 0`)).toBe('OK');
    const rm = await sh(`rm '${path}'`, undefined, 20_000);
    const written = await cmd(`write w 66 ${MiB} ${24 * MiB}`);
    const close = await cmd('close w');
    const state = { rm: rm.code === 0 ? 'ok' : rm.out.trim(), written, close, keys: await bucket.keys() };
    if (rm.code === 0) expect(state.keys.filter((k) => k === 'ok')).toEqual([]);
  }, 30_000);

  it('a failed rm (MinIO stopped): the close publishes everything, or fails', async () => {
    const cmd = driver();
    const path = join(dir, 'kept');
    expect(await cmd(`open w ${path} ${O_RDWR_CREAT_TRUNC}`)).toBe('OK');
    expect(await cmd(`write w 65 ${24 * MiB} 0`)).toBe('OK');
    await new Promise((r) => setTimeout(r, 1500));
    await sh(`ls -la '${dir}'`);
    process.kill(server.child.pid, 'SIGSTOP');
    let rm: { code: number; out: string };
    try {
      rm = await sh(`rm '${path}'`, undefined, 20_000);
    } finally {
      process.kill(server.child.pid, 'SIGCONT');
    }
    const written = await cmd(`write w 66 ${MiB} ${24 * MiB}`);
    const close = written === 'OK' ? await cmd('close w') : written;
    const whole = Buffer.concat([Buffer.alloc(24 * MiB, 65), Buffer.alloc(MiB, 66)]);
    const state = { rm: rm.code === 0 ? 'ok' : rm.out.trim(), written, close, keys: (await bucket.keys()).filter((k) => k === 'kept'), sha: await bucket.sha('kept') };
    if (rm.code === 0) {
      expect(state.keys).toEqual([]);
      return;
    }
    if (close === 'OK') expect({ keys: state.keys, sha: state.sha }).toEqual({ keys: ['kept'], sha: sha256(whole) });
  }, 30_000);
});
