// docs/SEMANTICS.md, "Unfinished multipart uploads": an upload the server no longer knows counts
// as aborted; that is S3's NoSuchUpload. A 404 that is not S3's answer (a gateway or proxy with no
// route for DELETE ?uploadId, a web server's HTML "Not Found") says nothing of the upload: the
// abort is tried again, and left only with a warning.
//
// Through a real mount over MinIO behind a relay that answers aborts with an HTML 404 while a
// file whose parts had left is removed, then takes them again before the unmount.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { type MinioServer, minioAvailable, startMinio } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { isAbort, logLines, startRelay } from './abort-harness.ts';
import { Bucket } from './hidden-harness.ts';
import { driver, O_RDWR_CREAT_TRUNC } from './rmopen-harness.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();
const minio = await minioAvailable();
const MiB = 1024 * 1024;
const NOT_FOUND_PAGE = '<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1></body></html>';

describe.skipIf(!fuse.ok || !minio.ok)('an abort answered by a 404 that is not S3\'s', () => {
  let server: MinioServer;
  let bucket: Bucket;
  let url: string;
  let misrouted = false;
  beforeAll(async () => {
    server = await startMinio();
    bucket = new Bucket(server, `abort-404-${process.pid}`);
    await bucket.create();
    url = (
      await startRelay(server.endpoint, (method, _p, q) =>
        misrouted && isAbort(method, q) ? { status: 404, body: NOT_FOUND_PAGE } : 'pass',
      )
    ).url;
  }, 30_000);

  it('is tried again, or left with a warning, not taken for done', async () => {
    const m = await mountBucket({ ...server, endpoint: url }, bucket.name, ['--cache-dir', await tempDir('abort-cache-')]);
    const cmd = driver();
    const path = join(m.dir, 'misrouted');
    expect(await cmd(`open w ${path} ${O_RDWR_CREAT_TRUNC}`)).toBe('OK');
    expect(await cmd(`write w 65 ${24 * MiB} 0`)).toBe('OK');
    misrouted = true;
    expect((await sh(`rm '${path}'`, undefined, 20_000)).code).toBe(0);
    expect(await cmd('close w')).toBe('OK');
    await new Promise((r) => setTimeout(r, 1000));
    expect(await bucket.uploads()).toContain('misrouted');
    // The route is back before the unmount: the last try would go through.
    misrouted = false;
    expect(await m.child.stop('SIGTERM', 30_000)).toBe(0);
    const uploads = await bucket.uploads();
    const warned = logLines(m.child.output()).some((l) => JSON.stringify(l).includes('misrouted'));
    expect({ uploadLeft: uploads.includes('misrouted'), warned }, m.child.output().slice(-2000)).not.toEqual({
      uploadLeft: true,
      warned: false,
    });
  }, 60_000);
});
