// The bench's own S3 client: bucket set-up and clean-up around each peer, seeding objects for the
// metadata suite, and the reference — the SDK alone moving the same files with parallel multipart
// uploads and parallel ranged GETs. It is a yardstick, not a bound: a mount that overlaps uploads
// across files can beat it where the SDK's pool waits on one dataset. The only bench file that
// imports @aws-sdk.

import { createReadStream, createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { Backend } from './backends/backend.ts';

// 8 MiB parts and 16 requests in flight: the part size the fast mounts use for sequential I/O,
// and enough concurrency to fill a 20 ms × 1 Gbit/s link (2.5 MB in flight) several times over.
export const PART_BYTES = 8 * 1024 * 1024;
export const CONCURRENCY = 16;

/** An SDK client set up the way S3-compatible servers need it; the test harness uses it too. */
export function s3Client(
  b: Pick<Backend, 'endpoint' | 'region' | 'accessKeyId' | 'secretAccessKey'> & { sessionToken?: string },
): S3Client {
  return new S3Client({
    endpoint: b.endpoint,
    region: b.region,
    credentials: { accessKeyId: b.accessKeyId, secretAccessKey: b.secretAccessKey, sessionToken: b.sessionToken },
    forcePathStyle: true,
    // S3-compatible servers mishandle the SDK's default streaming checksums (s3rver stores the
    // aws-chunked framing, Swift answers 501); send plain bodies.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

export async function ensureBucket(s3: S3Client, bucket: string): Promise<void> {
  try {
    await s3.send(new HeadBucketCommand({ Bucket: bucket }));
  } catch {
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  }
}

/** Runs `tasks` with at most `limit` at a time; rejects with the first failure. */
export async function inParallel<T>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export async function listSizes(s3: S3Client, bucket: string, prefix: string): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) sizes.set(o.Key!, o.Size ?? 0);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return sizes;
}

export async function deletePrefix(s3: S3Client, bucket: string, prefix: string): Promise<void> {
  const keys = [...(await listSizes(s3, bucket, prefix)).keys()];
  await inParallel(keys, CONCURRENCY, async (Key) => {
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key }));
  });
}

export async function putSmall(s3: S3Client, bucket: string, key: string, body: Buffer): Promise<void> {
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentLength: body.length }));
}

async function readPart(path: string, offset: number, length: number): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(length);
    const { bytesRead } = await fh.read(buf, 0, length, offset);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

export interface Transfer {
  readonly path: string;
  readonly key: string;
  readonly bytes: number;
}

/** Uploads files: small ones in one PUT, large ones as multipart; all parts share one pool. */
export async function uploadFiles(s3: S3Client, bucket: string, files: readonly Transfer[]): Promise<void> {
  const jobs: (() => Promise<void>)[] = [];
  const completions: (() => Promise<void>)[] = [];
  for (const f of files) {
    if (f.bytes <= PART_BYTES) {
      jobs.push(async () => putSmall(s3, bucket, f.key, await readPart(f.path, 0, f.bytes)));
      continue;
    }
    const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: f.key }));
    const parts: { ETag: string; PartNumber: number }[] = [];
    for (let n = 1, off = 0; off < f.bytes; n++, off += PART_BYTES) {
      const [partNumber, offset] = [n, off];
      jobs.push(async () => {
        const body = await readPart(f.path, offset, Math.min(PART_BYTES, f.bytes - offset));
        const r = await s3.send(
          new UploadPartCommand({
            Bucket: bucket,
            Key: f.key,
            UploadId: created.UploadId,
            PartNumber: partNumber,
            Body: body,
          }),
        );
        parts.push({ ETag: r.ETag!, PartNumber: partNumber });
      });
    }
    completions.push(async () => {
      parts.sort((a, b) => a.PartNumber - b.PartNumber);
      await s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: f.key,
          UploadId: created.UploadId,
          MultipartUpload: { Parts: parts },
        }),
      );
    });
  }
  await inParallel(jobs, CONCURRENCY, (job) => job());
  await inParallel(completions, CONCURRENCY, (c) => c());
}

/** Downloads files with ranged GETs of PART_BYTES, all ranges of all files sharing one pool. */
export async function downloadFiles(s3: S3Client, bucket: string, files: readonly Transfer[]): Promise<void> {
  const jobs: (() => Promise<void>)[] = [];
  for (const f of files) {
    const fh = await open(f.path, 'w');
    await fh.truncate(f.bytes);
    await fh.close();
    for (let off = 0; off < Math.max(f.bytes, 1); off += PART_BYTES) {
      const [start, end] = [off, Math.min(off + PART_BYTES, f.bytes) - 1];
      jobs.push(async () => {
        if (f.bytes === 0) return;
        const r = await s3.send(
          new GetObjectCommand({ Bucket: bucket, Key: f.key, Range: `bytes=${start}-${end}` }),
        );
        const out = createWriteStream(f.path, { flags: 'r+', start });
        await pipeline(r.Body as NodeJS.ReadableStream, out);
      });
    }
  }
  await inParallel(jobs, CONCURRENCY, (job) => job());
}

/** Reads a local file into the bucket with one PUT stream (for seeding large objects). */
export async function putFile(
  s3: S3Client,
  bucket: string,
  key: string,
  path: string,
  bytes: number,
): Promise<void> {
  if (bytes > PART_BYTES) return uploadFiles(s3, bucket, [{ path, key, bytes }]);
  await s3.send(
    new PutObjectCommand({ Bucket: bucket, Key: key, Body: createReadStream(path), ContentLength: bytes }),
  );
}

/** Reads every object of `keys` whole and discards the bytes; resolves with the bytes read. */
export async function readAll(s3: S3Client, bucket: string, keys: readonly string[]): Promise<number> {
  let bytes = 0;
  for (const key of keys) {
    const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    for await (const chunk of r.Body as AsyncIterable<Uint8Array>) bytes += chunk.length;
  }
  return bytes;
}
