import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isObjectError } from '../../../fuse/s3/object-client.ts';
import { toObjectError, withRetries } from '../../../fuse/s3/s3-errors.ts';
import {
  completeBody,
  deleteBody,
  errorOf,
  etagOf,
  firstDeleteError,
  listPage,
  multipartEtag,
  S3ReplyError,
  uploadIdOf,
  uploadsPage,
  xmlCanCarry,
} from '../../../fuse/s3/s3-replies.ts';
import { ListingProgress, MAX_LISTING_PAGES } from '../../../fuse/s3/listing-progress.ts';
import { parseXml } from '../../../fuse/s3/xml.ts';

const NS = 'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"';

describe('listPage', () => {
  it('decodes URL-encoded keys and prefixes when the server says it encoded them', () => {
    const page = listPage(
      `<ListBucketResult ${NS}><EncodingType>url</EncodingType><IsTruncated>true</IsTruncated><NextContinuationToken>t+1</NextContinuationToken>` +
        '<Contents><Key>a%01b%1B+c%2B</Key><Size>12</Size><ETag>&quot;e1&quot;</ETag><LastModified>2026-11-24T10:00:00.000Z</LastModified></Contents>' +
        '<CommonPrefixes><Prefix>d%C3%A9j%C3%A0/</Prefix></CommonPrefixes></ListBucketResult>',
    );
    expect(page.objects).toEqual([{ key: 'a\x01b\x1b c+', size: 12, etag: 'e1', lastModified: new Date('2026-11-24T10:00:00Z') }]);
    expect(page.prefixes).toEqual(['déjà/']);
    expect(page.nextToken).toBe('t+1');
  });

  it('takes keys as they come, entities decoded, from a server that ignores encoding-type', () => {
    const page = listPage('<ListBucketResult><Contents><Key>a&amp;b%20+</Key><Size>0</Size></Contents></ListBucketResult>');
    expect(page.objects[0]!.key).toBe('a&b%20+');
    expect(page.nextToken).toBeUndefined();
  });

  it('refuses a size that is not one, a truncated page with no token, and another root', () => {
    for (const size of ['-1', '1e3', 'x', '99999999999999999']) {
      expect(() => listPage(`<ListBucketResult><Contents><Key>k</Key><Size>${size}</Size></Contents></ListBucketResult>`)).toThrow(/not a size/);
    }
    expect(() => listPage('<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>')).toThrow(/continuation token/);
    expect(() => listPage('<ListAllMyBucketsResult/>')).toThrow(/not <ListBucketResult>/);
  });
});

describe('replies whose success carries an error', () => {
  it('an <Error> in a 200 and an empty body are a retried 503, as the AWS SDK has them', () => {
    const fail = () => etagOf('<Error><Code>InternalError</Code><Message>try again</Message></Error>', 'CompleteMultipartUploadResult');
    expect(fail).toThrow(S3ReplyError);
    const e = toObjectError((() => { try { fail(); } catch (err) { return err; } })());
    expect(e.message).toBe('InternalError (HTTP 503): try again');
    expect(e.kind).toBe('throttled');
    expect(() => etagOf('', 'CopyObjectResult')).toThrow(/empty answer/);
  });

  it('reads ETags, upload ids, delete errors and upload pages', () => {
    expect(etagOf('<CopyObjectResult><ETag>"abc"</ETag></CopyObjectResult>', 'CopyObjectResult')).toBe('abc');
    expect(uploadIdOf('<InitiateMultipartUploadResult><UploadId>u1</UploadId></InitiateMultipartUploadResult>')).toBe('u1');
    expect(() => uploadIdOf('<InitiateMultipartUploadResult/>')).toThrow(/no UploadId/);
    expect(firstDeleteError('<DeleteResult/>')).toBeUndefined();
    expect(firstDeleteError('<DeleteResult><Error><Key>k</Key><Code>AccessDenied</Code></Error></DeleteResult>')).toEqual({ key: 'k', message: 'AccessDenied' });
    const page = uploadsPage(
      '<ListMultipartUploadsResult><EncodingType>url</EncodingType><IsTruncated>true</IsTruncated><NextKeyMarker>a%01</NextKeyMarker><NextUploadIdMarker>u2</NextUploadIdMarker>' +
        '<Upload><Key>a%01</Key><UploadId>u2</UploadId><Initiated>2026-11-24T10:00:00Z</Initiated></Upload></ListMultipartUploadsResult>',
    );
    expect(page.uploads).toEqual([{ key: 'a\x01', uploadId: 'u2', initiated: new Date('2026-11-24T10:00:00Z') }]);
    expect(page.next).toEqual({ keyMarker: 'a\x01', uploadIdMarker: 'u2' });
  });
});

describe('error answers', () => {
  it('map to the kinds the filesystem knows, refused credentials to access-denied', () => {
    const kind = (status: number, body: string) => toObjectError(errorOf(status, body)).kind;
    expect(kind(404, '<Error><Code>NoSuchKey</Code></Error>')).toBe('not-found');
    expect(kind(404, '')).toBe('not-found');
    expect(kind(404, '<Error><Code>NoSuchBucket</Code></Error>')).toBe('no-such-bucket');
    expect(kind(403, '<Error><Code>InvalidAccessKeyId</Code></Error>')).toBe('access-denied');
    expect(kind(403, '<Error><Code>SignatureDoesNotMatch</Code></Error>')).toBe('access-denied');
    expect(kind(403, '')).toBe('access-denied');
    expect(kind(503, '<Error><Code>SlowDown</Code></Error>')).toBe('throttled');
    expect(kind(416, '<Error><Code>InvalidRange</Code></Error>')).toBe('invalid-range');
    expect(kind(500, '<Error><Code>InternalError</Code>')).toBe('other');
    expect(kind(400, '<!DOCTYPE x><Error><Code>NoSuchKey</Code></Error>')).toBe('other');
  });

  it('are retried on 5xx, 429 and resets, not on 4xx, up to the attempts given', async () => {
    const attempts = async (err: unknown, max = 3) => {
      let n = 0;
      const e = await withRetries(max, 'k', async () => {
        n++;
        throw err;
      }).catch((x: unknown) => x);
      expect(isObjectError(e)).toBe(true);
      return n;
    };
    expect(await attempts(errorOf(500, ''))).toBe(3);
    expect(await attempts(errorOf(429, ''))).toBe(3);
    expect(await attempts(Object.assign(new Error('reset'), { code: 'ECONNRESET' }))).toBe(3);
    expect(await attempts(errorOf(404, ''))).toBe(1);
    expect(await attempts(errorOf(403, ''))).toBe(1);
    expect(await attempts(errorOf(400, '<Error><Code>MalformedXML</Code></Error>'))).toBe(1);
  });
});

describe('request bodies', () => {
  it('DeleteObjects escapes keys, and its MD5 is of the bytes sent', () => {
    const body = deleteBody(['a&b', 'c<d>\r\n']);
    const el = parseXml(body);
    expect(el.name).toBe('Delete');
    expect(el.children.filter((c) => c.name === 'Object').map((o) => o.children[0]!.text)).toEqual(['a&b', 'c<d>\r\n']);
    expect(createHash('md5').update(body, 'utf8').digest('base64')).toHaveLength(24);
  });

  it('CompleteMultipartUpload lists the parts with quoted ETags', () => {
    const el = parseXml(completeBody([{ partNumber: 1, etag: 'e1' }, { partNumber: 2, etag: 'e2' }]));
    expect(el.children.map((p) => p.children.map((c) => c.text))).toEqual([['"e1"', '1'], ['"e2"', '2']]);
  });
});

describe('listings that must move on', () => {
  it('read IsTruncated as true or false in any case, follow a token without it, refuse anything else', () => {
    const page = (flag: string) => `<ListBucketResult>${flag}<NextContinuationToken>t</NextContinuationToken></ListBucketResult>`;
    expect(listPage(page('<IsTruncated> TRUE </IsTruncated>')).nextToken).toBe('t');
    expect(listPage(page('<IsTruncated>False</IsTruncated>')).nextToken).toBeUndefined();
    expect(listPage(page('')).nextToken).toBe('t');
    expect(() => listPage(page('<IsTruncated>1</IsTruncated>'))).toThrow(/IsTruncated/);
  });

  it('refuse a truncated upload listing without a NextKeyMarker', () => {
    const body = '<ListMultipartUploadsResult><IsTruncated>true</IsTruncated><NextUploadIdMarker>u</NextUploadIdMarker></ListMultipartUploadsResult>';
    expect(() => uploadsPage(body)).toThrow(/NextKeyMarker/);
  });

  it('refuse a cursor given before', () => {
    const progress = new ListingProgress('p/');
    expect(progress.next('a')).toBe('a');
    expect(progress.next('b')).toBe('b');
    expect(() => progress.next('a')).toThrow(/gave before/);
    expect(MAX_LISTING_PAGES).toBeGreaterThanOrEqual(10_000);
  });
});

describe('what XML and ETags can say', () => {
  it('tell keys XML 1.0 cannot carry', () => {
    for (const ok of ['plain', 'tab\tlf\ncr\r', 'ünï€😀']) expect(xmlCanCarry(ok)).toBe(true);
    for (const bad of ['ctl\u0001x', 'nul\u0000', 'esc\u001b[', 'x\uffff', 'lone\udcff']) expect(xmlCanCarry(bad)).toBe(false);
  });

  it('make the multipart ETag from the parts MD5s, in part order', () => {
    const a = createHash('md5').update('a').digest('hex');
    const b = createHash('md5').update('b').digest('hex');
    const want = `${createHash('md5').update(Buffer.concat([Buffer.from(a, 'hex'), Buffer.from(b, 'hex')])).digest('hex')}-2`;
    expect(multipartEtag([{ partNumber: 2, etag: b }, { partNumber: 1, etag: a }])).toBe(want);
    expect(multipartEtag([{ partNumber: 1, etag: 'not-an-md5' }])).toBeUndefined();
  });
});
