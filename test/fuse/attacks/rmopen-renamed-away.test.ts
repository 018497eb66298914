// Attack on "a removal of a file open for writing is what the bucket answered" (docs/SEMANTICS.md
// "unlink", "rename"): a file written, published (fsync), written again, renamed while dirty, then
// removed while still open. Its removal has two DELETEs: the new name's key, and the old name's
// object kept hidden since the rename (Namespace.removeWritten -> dropRenamedAway). A proxy in
// front of MinIO refuses only the second one (403, as a bucket policy denying DeleteObject on that
// key would). If the rm answers an error, the promise says nothing changed: the writer goes on, its
// close publishes the file under its name, and no stale object shows up under the old name.
// If the rm succeeded, nothing of the file may be published, under any name.

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


describe.skipIf(!fuse.ok || !minio.ok)('rm of a written file renamed away while dirty, the old name\'s DELETE refused', () => {
  let server: MinioServer;
  let bucket: Bucket;
  let dir: string;
  let refuse = '';
  beforeAll(async () => {
    server = await startMinio();
    bucket = new Bucket(server, `rmopen-ra-${process.pid}`);
    await bucket.create();
    const denied = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied.</Message></Error>`;
    const url = await startProxy(server.endpoint, (method, path) =>
      method === 'DELETE' && refuse !== '' && path === `/${bucket.name}/${refuse}` ? { status: 403, body: denied } : 'pass',
    );
    const cache = await tempDir('rmopen-cache-');
    dir = (await mountBucket({ ...server, endpoint: url }, bucket.name, ['--cache-dir', cache, '--cache-ttl', '0s', '--request-timeout', '2s', '--retries', '1'])).dir;
  }, 30_000);

  it('a failed rm leaves the writer publishing the file, and no stale object under the old name', async () => {
    const cmd = driver();
    expect(await cmd(`open w ${join(dir, 'a')} ${O_RDWR_CREAT_TRUNC}`)).toBe('OK');
    expect(await cmd('write w 65 100000 0')).toBe('OK');
    expect(await cmd('fsync w')).toBe('OK');
    expect(await bucket.keys()).toEqual(['a']);
    // Dirty again, then renamed: the object `a` stays in the bucket, hidden, until the close.
    expect(await cmd('write w 66 50000 100000')).toBe('OK');
    expect((await sh(`mv '${join(dir, 'a')}' '${join(dir, 'b')}'`, undefined, 20_000)).code).toBe(0);
    refuse = 'a';
    const rm = await sh(`rm '${join(dir, 'b')}'`, undefined, 20_000);
    refuse = '';
    const written = await cmd('write w 67 20000 150000');
    const close = await cmd('close w');
    const listed = (await sh(`ls -a '${dir}'`, undefined, 20_000)).out.split('\n').filter((n) => n && n !== '.' && n !== '..');
    const keys = await bucket.keys();
    const whole = Buffer.concat([Buffer.alloc(100000, 65), Buffer.alloc(50000, 66), Buffer.alloc(20000, 67)]);
    const state = { rm: rm.code === 0 ? 'ok' : rm.out.trim(), written, close, listed, keys, b: await bucket.sha('b'), a: await bucket.sha('a') };
    if (rm.code === 0) {
      // The removal happened: nothing of the file under any name.
      expect({ keys, listed }).toEqual({ keys: [], listed: [] });
      return;
    }
    // The removal failed: nothing changed, the writer's close published the file as `b`.
    expect({ written, close, keys, b: state.b, listed }).toEqual({ written: 'OK', close: 'OK', keys: ['b'], b: sha256(whole), listed: ['b'] });
  }, 40_000);
});
