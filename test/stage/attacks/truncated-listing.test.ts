// A ListObjectsV2 page that says IsTruncated=true but gives no NextContinuationToken (a store bug,
// or a store that only speaks the V1 NextMarker): stage takes the listing as complete, copies the
// first page, says `"complete":true` and exits 0. The objects after it are silently not copied: a
// job script sees success with inputs missing. rclone refuses such a page ("s3 protocol error:
// received listing v2 with IsTruncated set and no NextContinuationToken"). Expected: exit 2, one
// line naming the listing.

import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { etagOf, listXml, startFakeS3 } from './stage-fake-s3.ts';
import { stage } from './stage-run.ts';

afterAll(runTeardowns);

describe('stage in: a truncated listing without a continuation token', () => {
  it('is not taken for a complete one', async () => {
    const keys = ['p/a', 'p/b', 'p/c', 'p/d'];
    const s3 = await startFakeS3(new Map(keys.map((k) => [k, { body: Buffer.from(k), sha256: true }])));
    s3.hook = (req, res) => {
      if (req.url.searchParams.get('list-type') !== '2') return false;
      const page = listXml(keys.slice(0, 2).map((k) => ({ key: k, size: 3, etag: etagOf(s3.objects.get(k)!) })), 'T').replace('<NextContinuationToken>T</NextContinuationToken>', '');
      res.writeHead(200, { 'content-type': 'application/xml' }).end(page);
      return true;
    };
    const r = await stage(['in', 's3://bkt/p/', join(await tempDir(), 'd'), '--endpoint', s3.endpoint, '--state-dir', await tempDir()]);
    expect(r.code).toBe(2);
  });
});
