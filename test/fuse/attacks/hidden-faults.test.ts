// The removal of an open file when the server cannot take the DELETE (MinIO stopped with SIGSTOP
// for that moment, then resumed), through a real mount: a removal that failed must leave the file
// as it was, writers included. libfuse answers EBUSY when its search for a free hidden name cannot
// stat; when the names are cached, its hiding rename reaches the DELETE, which times out. Either
// way the file stands, and its writer's close publishes it (test/fuse/fs/remove-open.test.ts has
// the second case without timing).

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { type MinioServer, minioAvailable } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { Bucket, MiB, ops, stoppableMinio } from './hidden-harness.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();
const minio = await minioAvailable();

describe.skipIf(!fuse.ok || !minio.ok)('a removal the server refuses (MinIO)', () => {
  let server: MinioServer;
  let bucket: Bucket;
  let dir: string;
  beforeAll(async () => {
    ({ server, bucket } = await stoppableMinio(`hidf-${process.pid}`));
    const cache = await tempDir('estuary-hidcache-');
    // Names stay cached (the default TTL), so the rename reaches the DELETE without asking the server.
    dir = (await mountBucket(server, bucket.name, ['--cache-dir', cache, '--request-timeout', '1s', '--retries', '1'])).dir;
  }, 30_000);

  it('rm of an open file fails while the server is stopped: the writer goes on and its close publishes everything', async () => {
    // docs/SEMANTICS.md "close (flush) and fsync": close returns once the bucket has the data,
    // or EIO. A rm that answered an error removed nothing: the file is still there, and its
    // writer's close must publish it (or fail), never drop it silently.
    const run = await ops(['writer', join(dir, 'kept'), '3', String(1 * MiB), '110']);
    await run.reached('first');
    process.kill(server.child.pid, 'SIGSTOP');
    let rm: { code: number; out: string };
    try {
      rm = await sh(`rm '${join(dir, 'kept')}'`, undefined, 20_000);
    } finally {
      process.kill(server.child.pid, 'SIGCONT');
    }
    await run.open('first');
    await run.reached('before-close');
    await run.open('before-close');
    const r = await run.result();
    if (rm.code === 0) {
      // The removal went through after all: nothing of it may be in the bucket.
      expect(await bucket.keys()).toEqual([]);
      return;
    }
    expect(r.write_errs).toEqual([]);
    const listed = (await sh(`ls '${dir}'`)).out;
    expect({ close: r.close_err, listed: listed.includes('kept') }).toEqual({ close: null, listed: true });
    expect(await bucket.sha('kept')).toBe(r.sha);
  }, 40_000);
});
