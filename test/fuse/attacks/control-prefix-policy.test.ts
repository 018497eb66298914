// Attack: the least-privilege policy a site hands a project — s3:ListBucket on the bucket only
// with the condition s3:prefix = "proj/*", Get/Put/Delete on bucket/proj/* — and a mount of
// BUCKET/PREFIX (`estuary mount bkt/proj /mnt`, docs: "the bucket, optionally with a key prefix to
// mount"). AWS then answers HeadBucket 403 (it needs ListBucket without a prefix), while every
// request the mount of proj/ ever makes is allowed. mountpoint-s3 checks with an initial
// ListObjectsV2 under the prefix for this reason (it once did HeadBucket: awslabs/mountpoint-s3
// #203); s3fs retries its check with the directory (s3fs-fuse PR #2087).

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { filesystemAt, listing, type SeenRequest, startLyingServer, xml } from './lying-s3.ts';

afterAll(runTeardowns);

const denied = { status: 403, body: xml('<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>') };

/** The policy above, as S3 applies it. */
function projectPolicy(req: SeenRequest) {
  const path = req.url.pathname;
  if (path === '/bkt' || path === '/bkt/') {
    const prefix = req.url.searchParams.get('prefix') ?? '';
    if (req.url.searchParams.get('list-type') === '2' && prefix.startsWith('proj/'))
      return { body: listing(['proj/data.txt'], [], `<Prefix>${prefix}</Prefix><IsTruncated>false</IsTruncated>`) };
    return denied;
  }
  if (path.startsWith('/bkt/proj/')) return { headers: { etag: '"e"', 'content-length': '3' }, body: 'abc' };
  return denied;
}

describe('a mount of a prefix the keys may reach', () => {
  // Expected: the mount of bkt/proj starts and lists proj/. Today start() fails with
  // access-denied from HeadBucket, so `estuary mount bkt/proj` exits "access to bucket "bkt" was
  // denied" although every request the mount would make is allowed.
  it('starts with ListBucket allowed only under the prefix', async () => {
    const server = await startLyingServer(projectPolicy);
    const fs = await filesystemAt(server.endpoint, 'proj/');
    const started = await fs.start().then(() => 'started', (e: unknown) => String(e));
    expect(started).toBe('started');
    expect((await fs.readdir('/')).map((e) => e.name)).toContain('data.txt');
    await fs.stop();
  });
});
