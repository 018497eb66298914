// docs/SEMANTICS.md, "Unfinished multipart uploads": an upload the mount gives up (a removed file
// whose parts had left) is aborted at once; when the server does not take that abort, it is tried
// again every 30 s for 10 minutes and once more at unmount. Through a real mount over MinIO, with
// a relay that refuses the aborts (DELETE with an uploadId) while told to: the upload of a file
// removed while its parts were streaming is in the bucket while the aborts are refused, and gone
// once the mount has unmounted after they are taken again. Refused to the end, it is left with a
// warning that names the key, for the next start to abort.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { type MinioServer, minioAvailable, startMinio } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { ACCESS_DENIED, driver, O_RDWR_CREAT_TRUNC, startProxy } from './rmopen-harness.ts';
import { Bucket } from './hidden-harness.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();
const minio = await minioAvailable();
const MiB = 1024 * 1024;

describe.skipIf(!fuse.ok || !minio.ok)('aborts of uploads given up, refused by the server', () => {
  let server: MinioServer;
  let bucket: Bucket;
  let url: string;
  let refuse = false;
  const aborts: string[] = [];
  beforeAll(async () => {
    server = await startMinio();
    bucket = new Bucket(server, `rmopen-abort-${process.pid}`);
    await bucket.create();
    url = await startProxy(server.endpoint, (method, path, _headers, query) => {
      if (method !== 'DELETE' || !query.has('uploadId')) return 'pass';
      aborts.push(`${refuse ? 'refused' : 'passed'} ${path}`);
      return refuse ? { status: 403, body: ACCESS_DENIED } : 'pass';
    });
  }, 30_000);

  /** A 24 MiB stream (parts sent) removed while open, its aborts refused; the writer then closes. */
  async function streamAndRemove(dir: string, name: string) {
    const cmd = driver();
    const path = join(dir, name);
    expect(await cmd(`open w ${path} ${O_RDWR_CREAT_TRUNC}`)).toBe('OK');
    expect(await cmd(`write w 65 ${24 * MiB} 0`)).toBe('OK');
    refuse = true;
    expect((await sh(`rm '${path}'`, undefined, 20_000)).code).toBe(0);
    expect(await cmd('close w')).toBe('OK');
    expect(await bucket.uploads()).toContain(name);
    expect(aborts.some((a) => a === `refused /${bucket.name}/${name}`)).toBe(true);
  }

  it('taken again before the unmount: no upload is left', async () => {
    const m = await mountBucket({ ...server, endpoint: url }, bucket.name, ['--cache-dir', await tempDir('abort-cache-')]);
    await streamAndRemove(m.dir, 'kept-going');
    refuse = false;
    expect(await m.child.stop('SIGTERM', 30_000)).toBe(0);
    expect(await bucket.uploads(), JSON.stringify(aborts) + m.child.output().slice(-2000)).not.toContain('kept-going');
    expect(await bucket.keys()).not.toContain('kept-going');
  }, 60_000);

  it('refused to the end: left with a warning naming the key, and aborted by the next start', async () => {
    const m = await mountBucket({ ...server, endpoint: url }, bucket.name, ['--cache-dir', await tempDir('abort-cache-')]);
    await streamAndRemove(m.dir, 'refused');
    expect(await m.child.stop('SIGTERM', 30_000)).toBe(0);
    expect(await bucket.uploads()).toContain('refused');
    const warned = m.child.output().split('\n').filter((l) => l.includes('"code":"ESTUARY_FS_UPLOAD_LEFT"') && l.includes('"key":"refused"'));
    expect(warned.length, m.child.output().slice(-3000)).toBeGreaterThan(0);
    refuse = false;
    const again = await mountBucket({ ...server, endpoint: url }, bucket.name, ['--abort-uploads-after', '0.1s']);
    await again.child.waitFor(/aborted unfinished multipart uploads/, 20_000);
    expect(await bucket.uploads()).not.toContain('refused');
    expect(await again.child.stop('SIGTERM', 30_000)).toBe(0);
  }, 90_000);
});
