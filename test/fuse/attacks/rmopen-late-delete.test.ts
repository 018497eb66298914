// Attack on "a removal of a file open for writing is what the bucket answered: if the bucket
// does not answer (timeout), the removal fails with EIO and changes nothing" (docs/SEMANTICS.md
// "unlink"). A proxy in front of MinIO passes the DELETE on at once but holds its answer past
// --request-timeout (2 s, so that a loaded machine's slow PUT of the close is no failure): the
// bucket did delete, the mount gave up waiting. The file's writer had already published it
// (fsync) and writes nothing more, or writes more: in both cases the rm answers EIO, so the file
// must still be there once the writer has closed.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { type MinioServer, minioAvailable, startMinio } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { Bucket, sha256 } from './hidden-harness.ts';
import { startProxy, driver, O_RDWR_CREAT_TRUNC } from './rmopen-harness.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();
const minio = await minioAvailable();


describe.skipIf(!fuse.ok || !minio.ok)('rm of a written file whose DELETE is carried out but answered too late', () => {
  let server: MinioServer;
  let bucket: Bucket;
  let dir: string;
  let late = '';
  beforeAll(async () => {
    server = await startMinio();
    bucket = new Bucket(server, `rmopen-late-${process.pid}`);
    await bucket.create();
    const url = await startProxy(server.endpoint, (method, path) =>
      method === 'DELETE' && late !== '' && path === `/${bucket.name}/${late}` ? { lateMs: 5000 } : 'pass',
    );
    const cache = await tempDir('rmopen-cache-');
    dir = (await mountBucket({ ...server, endpoint: url }, bucket.name, ['--cache-dir', cache, '--cache-ttl', '0s', '--request-timeout', '2s', '--retries', '1'])).dir;
  }, 30_000);

  async function attempt(name: string, moreAfterRm: boolean) {
    const cmd = driver();
    const path = join(dir, name);
    expect(await cmd(`open w ${path} ${O_RDWR_CREAT_TRUNC}`)).toBe('OK');
    expect(await cmd('write w 65 200000 0')).toBe('OK');
    expect(await cmd('fsync w')).toBe('OK');
    expect(await bucket.sha(name)).toBe(sha256(Buffer.alloc(200000, 65)));
    late = name;
    const rm = await sh(`rm '${path}'`, undefined, 20_000);
    late = '';
    const written = moreAfterRm ? await cmd('write w 66 1000 200000') : 'none';
    const close = await cmd('close w');
    const whole = moreAfterRm ? Buffer.concat([Buffer.alloc(200000, 65), Buffer.alloc(1000, 66)]) : Buffer.alloc(200000, 65);
    const listed = (await sh(`ls '${dir}'`, undefined, 20_000)).out.split('\n').filter((n) => n === name);
    const state = { rm: rm.code === 0 ? 'ok' : rm.out.trim(), written, close, listed, keys: (await bucket.keys()).filter((k) => k === name), sha: await bucket.sha(name) };
    if (rm.code === 0) {
      expect({ keys: state.keys, listed }).toEqual({ keys: [], listed: [] });
      return;
    }
    // rm said it failed: nothing changed, the file is there with everything its writer wrote.
    expect({ close, keys: state.keys, sha: state.sha, listed }).toEqual({ close: 'OK', keys: [name], sha: sha256(whole), listed: [name] });
  }

  it('writer published (fsync) and writes nothing more: the file survives an rm that answered EIO', async () => {
    await attempt('clean', false);
  }, 30_000);

  it('writer writes more after the rm that answered EIO: its close publishes everything', async () => {
    await attempt('dirty', true);
  }, 30_000);
});
