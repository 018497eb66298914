// docs/SEMANTICS.md, "Unfinished multipart uploads": at start the mount aborts the uploads under
// its prefix "started more than --abort-uploads-after ago". The store dates an upload
// (<Initiated>, its own clock), so the age is told by the store's clock: on a host whose clock
// runs an hour ahead (a hardware clock kept in local time, a wrong time zone), an upload another
// host started seconds ago is not taken for one left by a mount that died.
//
// Through a real mount over MinIO whose process sees its clock 2 h ahead (Date, preloaded), with
// --abort-uploads-after 1h; another client has just started an upload and sent a part.

import { CreateMultipartUploadCommand, UploadPartCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isMounted } from '../../../fuse/mount-table.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { type MinioServer, minioAvailable, startMinio } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, runEstuary, serverEnv, sh } from '../mount-helpers.ts';
import { Bucket } from './hidden-harness.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();
const minio = await minioAvailable();
const MiB = 1024 * 1024;
const PRELOAD = new URL('./abort-skewed-clock.mjs', import.meta.url).pathname;

describe.skipIf(!fuse.ok || !minio.ok)('the start-up abort on a host whose clock is ahead', () => {
  let server: MinioServer;
  let bucket: Bucket;
  beforeAll(async () => {
    server = await startMinio();
    bucket = new Bucket(server, `abort-skew-${process.pid}`);
    await bucket.create();
  }, 30_000);

  it('leaves an upload another host started seconds ago', async () => {
    // Another host is writing `live`: its upload started now, one part sent.
    const { UploadId } = await bucket.s3.send(new CreateMultipartUploadCommand({ Bucket: bucket.name, Key: 'live' }));
    await bucket.s3.send(
      new UploadPartCommand({ Bucket: bucket.name, Key: 'live', UploadId, PartNumber: 1, Body: Buffer.alloc(5 * MiB, 1) }),
    );
    const dir = await tempDir('estuary-mnt-');
    const child = runEstuary(
      [
        'mount', bucket.name, dir, '--endpoint', server.endpoint, '--log-format', 'json',
        '--cache-dir', await tempDir('abort-cache-'), '--abort-uploads-after', '1h',
      ],
      { ...serverEnv(server), NODE_OPTIONS: `--import ${PRELOAD}`, ESTUARY_TEST_SKEW_MS: String(2 * 3600_000) },
    );
    onTeardown(async () => {
      if (await isMounted(dir)) await sh(`fusermount -uz '${dir}'`);
      await child.stop('SIGKILL');
    });
    await child.waitFor(/"msg":"mounted /, 30_000);
    // The start-up's abort runs in the background: give it time to list and abort.
    await child.waitFor(/unfinished multipart uploads/, 5000).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 500));
    const uploads = await bucket.uploads();
    const said = child.output().split('\n').filter((l) => l.includes('unfinished multipart uploads'));
    expect(uploads, said.join('\n')).toContain('live');
    expect(await child.stop('SIGTERM', 30_000)).toBe(0);
  }, 60_000);
});
