// Attack: a store that says a listing goes on but never moves it on. ListMultipartUploads with
// IsTruncated=true and no (or the same) markers, ListObjectsV2 handing back the continuation token
// it was just given. The mount must call that a broken listing (an error, as `estuary stage` does:
// docs/ERRORS.md ESTUARY_STAGE_STORE "a continuation token it gave before"), not ask forever.

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { listPage } from '../../../fuse/s3/s3-replies.ts';
import { clientFor, filesystemAt, startLyingServer, within, xml } from './lying-s3.ts';

afterAll(runTeardowns);

const uploadsPage = (extra: string) =>
  xml(
    `<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>bkt</Bucket>` +
      `<Upload><Key>k</Key><UploadId>u1</UploadId><Initiated>2020-01-01T00:00:00.000Z</Initiated></Upload>` +
      `<IsTruncated>true</IsTruncated>${extra}</ListMultipartUploadsResult>`,
  );

describe('listings that never end', () => {
  // Expected: listUploads fails (a truncated page without a marker to go on from is a protocol
  // fault, as a truncated ListObjectsV2 page without a token already is) after a few requests.
  // Today it sends the same request forever and piles every page's uploads into one array.
  it('ListMultipartUploads truncated with no markers fails instead of looping', async () => {
    const server = await startLyingServer(() => ({ body: uploadsPage('') }));
    const client = clientFor(server.endpoint);
    const got = await within(client.listUploads(''), 3000);
    expect(got, `after ${server.requests.length} requests`).not.toBe('still pending');
    expect(got).toHaveProperty('error');
    expect(server.requests.length).toBeLessThan(10);
  });

  it('ListMultipartUploads truncated with the markers it was given fails instead of looping', async () => {
    const server = await startLyingServer(() => ({
      body: uploadsPage('<NextKeyMarker>k</NextKeyMarker><NextUploadIdMarker>u1</NextUploadIdMarker>'),
    }));
    const client = clientFor(server.endpoint);
    const got = await within(client.listUploads(''), 3000);
    expect(got, `after ${server.requests.length} requests`).not.toBe('still pending');
    expect(got).toHaveProperty('error');
    expect(server.requests.length).toBeLessThan(10);
  });

  // Expected: readdir fails (EIO) once the store hands back a continuation token it gave before;
  // today readdir asks for the same page forever and never answers.
  it('readdir of a listing whose continuation token repeats fails instead of looping', async () => {
    const server = await startLyingServer((req) => {
      if (req.method === 'HEAD') return { status: 200 };
      const page =
        `<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>bkt</Name><Prefix></Prefix>` +
        `<KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys><Delimiter>/</Delimiter>` +
        `<Contents><Key>a</Key><Size>1</Size><ETag>"e"</ETag><LastModified>2020-01-01T00:00:00.000Z</LastModified></Contents>` +
        `<IsTruncated>true</IsTruncated><NextContinuationToken>same</NextContinuationToken></ListBucketResult>`;
      return { body: xml(page) };
    });
    const fs = await filesystemAt(server.endpoint);
    const got = await within(fs.readdir('/'), 3000);
    const lists = server.requests.filter((r) => r.url.searchParams.get('list-type') === '2').length;
    expect(got, `after ${lists} listing requests`).not.toBe('still pending');
    expect(got).toHaveProperty('error');
    expect(lists).toBeLessThan(10);
  });

  // Holds today: a truncated ListObjectsV2 page with an empty continuation token is refused.
  it('a truncated page with an empty continuation token is refused', () => {
    for (const token of ['<NextContinuationToken></NextContinuationToken>', '<NextContinuationToken/>', ''])
      expect(() => listPage(xml(`<ListBucketResult><IsTruncated>true</IsTruncated>${token}</ListBucketResult>`))).toThrow(/continuation token/);
  });
});
