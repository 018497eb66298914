// --write-back keeps acknowledged files in a journal under --cache-dir, by default
// ~/.cache/estuary/BUCKET, and resumes them at the next mount. Files closed on one store must
// never be uploaded to another store that happens to have a bucket of the same name.

import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket, sh } from '../fuse/mount-helpers.ts';
import { runTeardowns } from '../helpers/cleanup.ts';
import { s3Client } from '../helpers/s3-smoke.ts';
import { startS3rver } from '../helpers/s3rver.ts';
import { tempDir } from '../helpers/tmp.ts';
import { startRelay } from './mount-relay.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();

describe.runIf(fuse.ok)('mount --write-back: the journal after a crash', () => {
  it('does not upload one endpoint’s files to a same-named bucket on another endpoint', async () => {
    // Each mount's default journal goes under XDG_CACHE_HOME: a fresh one for this test.
    process.env.XDG_CACHE_HOME = await tempDir('estuary-xdg-');
    const siteA = await startS3rver({ buckets: ['data'] });
    const cloudB = await startS3rver({ buckets: ['data'] });
    const relayA = await startRelay(siteA);
    const a = await mountBucket(relayA.server, 'data', ['--write-back']);
    // Site A takes no uploads for now, so the file stays in the journal after its close().
    relayA.mode = { kind: 'status', status: 503, method: 'PUT' };
    const w = await sh(`echo 'site A only' > '${a.dir}/private.txt'`);
    expect(w.code, w.out).toBe(0);
    a.child.proc.kill('SIGKILL');
    await a.child.exited;
    // Later, the same user mounts the bucket of the same name on another endpoint.
    const b = await mountBucket(cloudB, 'data', ['--write-back']);
    await new Promise((r) => setTimeout(r, 3000));
    const onB = await s3Client(cloudB)
      .send(new HeadObjectCommand({ Bucket: 'data', Key: 'private.txt' }))
      .then(() => 'uploaded to B', () => 'absent');
    expect(onB, `${b.dir}: a file closed on site A`).toBe('absent');
  });
});
