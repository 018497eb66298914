// One smoke suite for every S3 server the tests start: the same test body runs against s3rver,
// Swift and MinIO, so a difference between them shows up as a quirk declared here, next to the
// server, and documented in docs/TESTING.md. A quirk that goes away fails its test on purpose.

import { s3Client as benchS3Client } from '../../bench/s3.ts';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import type { S3Server } from './s3rver.ts';

/** How a server departs from AWS S3, as observed; each is asserted, not assumed. */
export interface S3Quirks {
  /** `Range: bytes=-N` returns the first N+1 bytes instead of the last N. */
  readonly suffixRangeFromStart: boolean;
  /** The ETag of a multipart object is a plain MD5, not AWS's `"<md5>-<parts>"`. */
  readonly multipartEtagPlainMd5: boolean;
  /** ListParts and AbortMultipartUpload are refused with 405 Method Not Allowed. */
  readonly noListPartsOrAbort: boolean;
  /** ListMultipartUploads is refused with 501 Not Implemented. */
  readonly noListMultipartUploads: boolean;
  /** DeleteObjects is refused (400) unless the request carries Content-MD5; the SDK sends CRC32. */
  readonly deleteObjectsNeedsMd5: boolean;
  /**
   * What happens to a streamed PutObject body the SDK sends with `aws-chunked` framing (its default
   * for streams): 'refused' (501 Not Implemented), 'stored-with-framing' (a corrupt object) or
   * 'decoded' (stored as sent, its trailer checksum checked), as AWS does.
   */
  readonly awsChunked: 'refused' | 'stored-with-framing' | 'decoded';
  /** Creates a bucket with an underscore in its name, which AWS refuses for new buckets. */
  readonly acceptsUnderscoreBucket: boolean;
}

export const S3RVER_QUIRKS: S3Quirks = {
  suffixRangeFromStart: true,
  multipartEtagPlainMd5: true,
  noListPartsOrAbort: true,
  noListMultipartUploads: true,
  deleteObjectsNeedsMd5: false,
  awsChunked: 'stored-with-framing',
  acceptsUnderscoreBucket: true,
};

export const SWIFT_QUIRKS: S3Quirks = {
  suffixRangeFromStart: false,
  multipartEtagPlainMd5: false,
  noListPartsOrAbort: false,
  noListMultipartUploads: false,
  deleteObjectsNeedsMd5: true,
  awsChunked: 'refused',
  acceptsUnderscoreBucket: false,
};

/** MinIO behaves as AWS S3 does in everything the suite checks. */
export const MINIO_QUIRKS: S3Quirks = {
  suffixRangeFromStart: false,
  multipartEtagPlainMd5: false,
  noListPartsOrAbort: false,
  noListMultipartUploads: false,
  deleteObjectsNeedsMd5: false,
  awsChunked: 'decoded',
  acceptsUnderscoreBucket: false,
};

const MiB = 1024 * 1024;
/** AWS's smallest part but the last, which both servers enforce. */
const PART = 5 * MiB;

/** An SDK client set up the way every S3-compatible server here needs it (bench/s3.ts). */
export const s3Client: (server: S3Server) => S3Client = benchS3Client;

/**
 * Sends DeleteObjects with Content-MD5 in place of the SDK's CRC32 checksum headers: the only
 * form Swift's s3api accepts, and s3rver accepts it too.
 */
export function withContentMd5(client: S3Client): S3Client {
  client.middlewareStack.add(
    (next) => async (args) => {
      const req = args.request as {
        query?: Record<string, unknown>;
        headers: Record<string, string>;
        body: unknown;
      };
      if (req.query && 'delete' in req.query && typeof req.body === 'string') {
        for (const h of Object.keys(req.headers)) {
          if (/^x-amz-(sdk-)?checksum/i.test(h)) delete req.headers[h];
        }
        req.headers['content-md5'] = createHash('md5').update(req.body).digest('base64');
      }
      return next(args);
    },
    { step: 'build', priority: 'low', name: 'estuaryContentMd5' },
  );
  return client;
}

const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');

async function body(s3: S3Client, bucket: string, key: string, range?: string) {
  const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: range }));
  return { bytes: Buffer.from(await r.Body!.transformToByteArray()), response: r };
}

/** Registers the smoke tests for one server kind; `start` runs once, before them. */
export function s3SmokeSuite(name: string, start: () => Promise<S3Server>, quirks: S3Quirks): void {
  describe(`S3 smoke: ${name}`, () => {
    let s3: S3Client;
    let server: S3Server;
    const bucket = 'smoke';
    beforeAll(async () => {
      server = await start();
      s3 = s3Client(server);
      await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    });

    it('refuses bucket names that S3 refuses', async () => {
      const create = (Bucket: string) => s3.send(new CreateBucketCommand({ Bucket }));
      for (const name of ['ab', 'Upper-Case']) {
        await expect(create(name)).rejects.toMatchObject({ name: 'InvalidBucketName' });
      }
      if (quirks.acceptsUnderscoreBucket) await create('under_score');
      else await expect(create('under_score')).rejects.toMatchObject({ name: 'InvalidBucketName' });
    });

    it('puts, heads and gets an object with its metadata', async () => {
      const data = randomBytes(100_000);
      const put = await s3.send(
        new PutObjectCommand({ Bucket: bucket, Key: 'a/b.bin', Body: data, Metadata: { origin: 'kek' } }),
      );
      expect(put.ETag).toBe(`"${md5(data)}"`);
      const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'a/b.bin' }));
      expect(head.ContentLength).toBe(data.length);
      expect(head.Metadata).toEqual({ origin: 'kek' });
      expect((await body(s3, bucket, 'a/b.bin')).bytes.equals(data)).toBe(true);
    });

    it('lists in pages with continuation tokens and common prefixes', async () => {
      const keys = Array.from({ length: 7 }, (_, i) => `list/k${i}`);
      await Promise.all(keys.map((Key) => s3.send(new PutObjectCommand({ Bucket: bucket, Key, Body: Key }))));
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'list/sub/x', Body: 'x' }));
      const seen: string[] = [];
      const pages: number[] = [];
      let token: string | undefined;
      do {
        const page = await s3.send(
          new ListObjectsV2Command({
            Bucket: bucket,
            Prefix: 'list/k',
            MaxKeys: 3,
            ContinuationToken: token,
          }),
        );
        pages.push(page.KeyCount ?? 0);
        seen.push(...(page.Contents ?? []).map((o) => o.Key!));
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      expect(pages).toEqual([3, 3, 1]);
      expect(seen).toEqual(keys);
      const delimited = await s3.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: 'list/', Delimiter: '/' }),
      );
      expect(delimited.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['list/sub/']);
      expect(delimited.Contents).toHaveLength(7);
    });

    it('uploads in parts and reads the object back whole', async () => {
      const parts = [randomBytes(PART), randomBytes(PART), randomBytes(MiB)];
      const key = 'multi.bin';
      const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
      const done = [];
      for (const [i, part] of parts.entries()) {
        const r = await s3.send(
          new UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber: i + 1, Body: part }),
        );
        expect(r.ETag).toBe(`"${md5(part)}"`);
        done.push({ PartNumber: i + 1, ETag: r.ETag });
      }
      const complete = await s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: key,
          UploadId,
          MultipartUpload: { Parts: done },
        }),
      );
      const whole = Buffer.concat(parts);
      const awsEtag = `"${md5(Buffer.concat(parts.map((p) => createHash('md5').update(p).digest())))}-3"`;
      expect(complete.ETag).toBe(quirks.multipartEtagPlainMd5 ? `"${md5(whole)}"` : awsEtag);
      const got = await body(s3, bucket, key);
      expect(got.bytes.length).toBe(whole.length);
      expect(got.bytes.equals(whole)).toBe(true);
    });

    it('lists and aborts an unfinished multipart upload, or refuses to', async () => {
      const key = 'aborted.bin';
      const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
      await s3.send(
        new UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber: 1, Body: randomBytes(PART) }),
      );
      const listParts = s3.send(new ListPartsCommand({ Bucket: bucket, Key: key, UploadId }));
      const abort = () => s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId }));
      if (quirks.noListPartsOrAbort) {
        const refused = { name: 'MethodNotAllowed', $metadata: { httpStatusCode: 405 } };
        await expect(listParts).rejects.toMatchObject(refused);
        await expect(abort()).rejects.toMatchObject(refused);
        return;
      }
      expect((await listParts).Parts?.map((p) => [p.PartNumber, p.Size])).toEqual([[1, PART]]);
      await abort();
      await expect(
        s3.send(new ListPartsCommand({ Bucket: bucket, Key: key, UploadId })),
      ).rejects.toMatchObject({
        name: 'NoSuchUpload',
      });
    });

    it('serves byte ranges, including a suffix range', async () => {
      const data = randomBytes(10_000);
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'ranged.bin', Body: data }));
      const mid = await body(s3, bucket, 'ranged.bin', 'bytes=100-1099');
      expect(mid.response.$metadata.httpStatusCode).toBe(206);
      expect(mid.response.ContentRange).toBe('bytes 100-1099/10000');
      expect(mid.bytes.equals(data.subarray(100, 1100))).toBe(true);
      const suffix = await body(s3, bucket, 'ranged.bin', 'bytes=-500');
      const expected = quirks.suffixRangeFromStart ? data.subarray(0, 501) : data.subarray(10_000 - 500);
      expect(suffix.bytes.equals(expected)).toBe(true);
    });

    it('copies an object server-side, metadata included', async () => {
      const data = randomBytes(20_000);
      await s3.send(
        new PutObjectCommand({ Bucket: bucket, Key: 'src.bin', Body: data, Metadata: { site: 'fnal' } }),
      );
      await s3.send(
        new CopyObjectCommand({ Bucket: bucket, Key: 'dst.bin', CopySource: `${bucket}/src.bin` }),
      );
      const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'dst.bin' }));
      expect(head.Metadata).toEqual({ site: 'fnal' });
      expect((await body(s3, bucket, 'dst.bin')).bytes.equals(data)).toBe(true);
    });

    it('deletes an object, and a missing one answers NotFound', async () => {
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'gone.txt', Body: 'bye' }));
      await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'gone.txt' }));
      await expect(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'gone.txt' }))).rejects.toMatchObject(
        {
          name: 'NotFound',
        },
      );
      await expect(body(s3, bucket, 'gone.txt')).rejects.toMatchObject({ name: 'NoSuchKey' });
    });

    it('deletes several objects at once, with Content-MD5 where CRC32 is refused', async () => {
      const keys = ['bulk/1', 'bulk/2', 'bulk/3'];
      await Promise.all(keys.map((Key) => s3.send(new PutObjectCommand({ Bucket: bucket, Key, Body: Key }))));
      const del = (client: S3Client, Key: string) =>
        client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: [{ Key }] } }));
      if (quirks.deleteObjectsNeedsMd5) {
        await expect(del(s3, 'bulk/1')).rejects.toMatchObject({ name: 'InvalidRequest' });
      } else {
        expect((await del(s3, 'bulk/1')).Deleted?.map((d) => d.Key)).toEqual(['bulk/1']);
      }
      const md5Client = withContentMd5(s3Client(server));
      expect((await del(md5Client, 'bulk/2')).Deleted?.map((d) => d.Key)).toEqual(['bulk/2']);
      const left = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'bulk/' }));
      const expected = quirks.deleteObjectsNeedsMd5 ? ['bulk/1', 'bulk/3'] : ['bulk/3'];
      expect(left.Contents?.map((o) => o.Key)).toEqual(expected);
    });

    it('lists unfinished multipart uploads, or refuses to', async () => {
      const { UploadId } = await s3.send(
        new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'pending' }),
      );
      const list = s3.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
      if (quirks.noListMultipartUploads) {
        await expect(list).rejects.toMatchObject({ $metadata: { httpStatusCode: 501 } });
        return;
      }
      expect((await list).Uploads?.map((u) => [u.Key, u.UploadId])).toContainEqual(['pending', UploadId]);
    });

    it('handles a streamed aws-chunked PutObject body as declared', async () => {
      // The SDK's defaults (checksums WHEN_SUPPORTED) frame a stream body as aws-chunked.
      const defaults = new S3Client({
        endpoint: server.endpoint,
        region: server.region,
        credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
        forcePathStyle: true,
      });
      const put = defaults.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: 'chunked',
          Body: Readable.from([Buffer.from('hello')]),
          ContentLength: 5,
        }),
      );
      if (quirks.awsChunked === 'refused') {
        await expect(put).rejects.toMatchObject({
          name: 'NotImplemented',
          $metadata: { httpStatusCode: 501 },
        });
        return;
      }
      await put;
      const stored = (await body(s3, bucket, 'chunked')).bytes.toString();
      if (quirks.awsChunked === 'decoded') {
        expect(stored).toBe('hello');
        return;
      }
      expect(stored).not.toBe('hello');
      expect(stored).toMatch(/^5\r\nhello\r\n0\r\n/);
    });
  });
}
