// The ObjectClient: the control calls (list, head, copy, delete, multipart create, complete and
// abort) over the AWS SDK v3, and the bytes (GET, PUT, UploadPart) over the data path
// (data-path.ts), which signs with the credentials and addresses the URL the SDK resolved. With
// its helpers (sdk-*.ts) the only code that imports @aws-sdk. Settings chosen for S3-compatible
// servers as much as for AWS: path-style addressing, checksums only where the API requires them
// (s3rver stores aws-chunked framing as data, Swift refuses it), Content-MD5 instead of CRC32 on
// DeleteObjects (Swift needs it), and URL-encoded keys in listings (url-keys.ts).

import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { DataPath } from './data-path.ts';
import { SlabPool } from './slab-pool.ts';
import { toObjectError } from './sdk-errors.ts';
import { contentMd5ForDeleteObjects } from './sdk-middleware.ts';
import { listedKey } from './url-keys.ts';
import {
  type ByteRange,
  type CompletedPart,
  type ListOptions,
  type ListPage,
  type ObjectClient,
  isObjectError,
  ObjectError,
  type ObjectHead,
  type PendingUpload,
  type OnPiece,
  type WriteOptions,
} from './object-client.ts';

// Not imported: an ES module import of node:http loads Node's bundled undici (see endpoint-probe.ts).
const { Agent: HttpAgent } = process.getBuiltinModule('node:http');
const { Agent: HttpsAgent } = process.getBuiltinModule('node:https');

export interface SdkClientOptions {
  readonly bucket: string;
  /** S3-compatible endpoint; AWS's own when undefined. */
  readonly endpoint?: string;
  readonly region: string;
  /** Attempts per request, with backoff (503 SlowDown, resets, 5xx): the SDK's standard mode. */
  readonly maxAttempts: number;
  /**
   * An attempt that sends or receives no byte for this long fails with a timeout, which counts
   * as a reset (retried, then `unavailable`): a store that accepts a request and never answers
   * must not hold the caller, whom the kernel cannot interrupt while the daemon has its request.
   */
  readonly idleTimeoutMs: number;
  /** Sockets per host: parallel part uploads and ranged reads each take one. */
  readonly maxSockets: number;
  readonly credentials?: { accessKeyId: string; secretAccessKey: string };
}

const stripQuotes = (etag: string | undefined): string => (etag ?? '').replace(/"/g, '');

/** CopySource is `bucket/key` with the key URL-encoded but its slashes kept. */
function copySource(bucket: string, key: string): string {
  return `${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
}

export class SdkObjectClient implements ObjectClient {
  private readonly s3: S3Client;
  private readonly bucket: string;
  private readonly endpoint: string | undefined;
  private readonly maxAttempts: number;
  private readonly idleTimeoutMs: number;
  private readonly maxSockets: number;
  private dataPath: Promise<DataPath> | undefined;
  private readonly slabs = new SlabPool();

  constructor(options: SdkClientOptions) {
    this.bucket = options.bucket;
    this.endpoint = options.endpoint;
    this.maxAttempts = options.maxAttempts;
    this.idleTimeoutMs = options.idleTimeoutMs;
    this.maxSockets = options.maxSockets;
    const agent = { keepAlive: true, maxSockets: options.maxSockets };
    this.s3 = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: true,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: options.maxAttempts,
      retryMode: 'standard',
      credentials: options.credentials,
      requestHandler: {
        httpAgent: new HttpAgent(agent),
        httpsAgent: new HttpsAgent(agent),
        // A connect that hangs this long means the endpoint is down, not slow.
        connectionTimeout: 5000,
        socketTimeout: options.idleTimeoutMs,
      },
    });
    contentMd5ForDeleteObjects(this.s3);
  }

  private async call<T>(key: string | undefined, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toObjectError(err, key);
    }
  }

  async head(key: string): Promise<ObjectHead | undefined> {
    try {
      const r = await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return {
        key,
        size: r.ContentLength ?? 0,
        etag: stripQuotes(r.ETag),
        lastModified: r.LastModified ?? new Date(0),
        metadata: r.Metadata ?? {},
        contentType: r.ContentType,
      };
    } catch (err) {
      const e = toObjectError(err, key);
      if (e.kind === 'not-found') return undefined;
      throw e;
    }
  }

  /**
   * The data path, made on first use: the endpoint (--endpoint, or AWS_ENDPOINT_URL_S3 and the
   * shared config, or AWS's own) and the bucket's URL on it come from the SDK's own rules.
   */
  private data(): Promise<DataPath> {
    this.dataPath ??= this.makeDataPath().catch((err: unknown) => {
      // Asked again next time: what failed (the shared config, say) may be fixed by then.
      this.dataPath = undefined;
      throw toObjectError(err, this.bucket);
    });
    return this.dataPath;
  }

  private async makeDataPath(): Promise<DataPath> {
    const c = this.s3.config;
    const region = await c.region();
    const endpoint = this.endpoint ?? (await c.serviceConfiguredEndpoint?.());
    const resolved = c.endpointProvider({
      Bucket: this.bucket,
      Region: region,
      ForcePathStyle: true,
      UseFIPS: await c.useFipsEndpoint(),
      UseDualStack: await c.useDualstackEndpoint(),
      Endpoint: endpoint,
    });
    const scheme = (resolved.properties?.authSchemes as { signingRegion?: string }[] | undefined)?.[0];
    return new DataPath({
      bucketUrl: new URL(resolved.url.href),
      region: scheme?.signingRegion ?? region,
      credentials: () => c.credentials(),
      maxAttempts: this.maxAttempts,
      idleTimeoutMs: this.idleTimeoutMs,
      maxSockets: this.maxSockets,
      slabs: this.slabs,
    });
  }

  async get(key: string, range?: ByteRange): Promise<Buffer> {
    return (await (await this.data()).getBuffer(key, range)).body;
  }

  async getPieces(key: string, range: ByteRange, onPiece: OnPiece): Promise<number> {
    return (await this.data()).getPieces(key, range, onPiece);
  }

  releasePiece(piece: Buffer): void {
    this.slabs.release(piece);
  }

  async getWithHead(key: string, range: ByteRange): Promise<{ body: Buffer; head: ObjectHead }> {
    const data = await this.data();
    try {
      const got = await data.getBuffer(key, range);
      if (got.size !== undefined) return { body: got.body, head: data.headOf(key, { reply: got.reply, size: got.size }) };
      // A 200 as long as the range (the range alone, or an object that size): a HEAD tells which.
      const head = await this.head(key);
      const said = data.headOf(key, { reply: got.reply, size: got.body.length });
      const differ = <T>(a: T, b: T, none: T) => a !== none && b !== none && a !== b;
      if (!head || differ(head.etag, said.etag, '') || differ(head.lastModified.getTime(), said.lastModified.getTime(), 0))
        throw new ObjectError('changed', `${key} was replaced while it was opened`, key);
      return { body: got.body, head: { ...said, size: head.size } };
    } catch (err) {
      if (!isObjectError(err, 'invalid-range')) throw err;
      // A range of an empty object is unsatisfiable: ask for the facts alone.
      const head = await this.head(key);
      if (!head) throw new ObjectError('not-found', `no such key ${key}`, key);
      return { body: Buffer.alloc(0), head };
    }
  }

  async put(key: string, body: Buffer, options: WriteOptions = {}): Promise<{ etag: string }> {
    return (await this.data()).put(key, body, options);
  }

  list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    return this.call(prefix, async () => {
      const r = await this.s3.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: prefix,
          Delimiter: options.delimiter,
          ContinuationToken: options.continuationToken,
          MaxKeys: options.maxKeys,
          // See url-keys.ts: one key with a control character would fail the whole listing.
          EncodingType: 'url',
        }),
      );
      const decode = (k: string | undefined) => listedKey(k ?? '', r.EncodingType);
      return {
        objects: (r.Contents ?? []).map((o) => ({
          key: decode(o.Key),
          size: o.Size ?? 0,
          etag: stripQuotes(o.ETag),
          lastModified: o.LastModified ?? new Date(0),
        })),
        prefixes: (r.CommonPrefixes ?? []).map((p) => decode(p.Prefix)),
        nextToken: r.IsTruncated ? r.NextContinuationToken : undefined,
      };
    });
  }

  listUploads(prefix: string): Promise<PendingUpload[]> {
    return this.call(prefix, async () => {
      const out: PendingUpload[] = [];
      let keyMarker: string | undefined;
      let uploadIdMarker: string | undefined;
      for (;;) {
        const r = await this.s3.send(
          new ListMultipartUploadsCommand({
            Bucket: this.bucket,
            Prefix: prefix,
            KeyMarker: keyMarker,
            UploadIdMarker: uploadIdMarker,
            EncodingType: 'url',
          }),
        );
        for (const u of r.Uploads ?? []) {
          const key = u.Key && listedKey(u.Key, r.EncodingType);
          if (key && u.UploadId) out.push({ key, uploadId: u.UploadId, initiated: u.Initiated ?? new Date(0) });
        }
        if (!r.IsTruncated) return out;
        keyMarker = r.NextKeyMarker && listedKey(r.NextKeyMarker, r.EncodingType);
        uploadIdMarker = r.NextUploadIdMarker;
      }
    });
  }

  delete(key: string): Promise<void> {
    return this.call(key, async () => {
      await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    });
  }

  deleteMany(keys: readonly string[]): Promise<void> {
    return this.call(keys[0], async () => {
      // One request takes at most 1000 keys.
      for (let i = 0; i < keys.length; i += 1000) {
        const batch = keys.slice(i, i + 1000);
        const r = await this.s3.send(
          new DeleteObjectsCommand({
            Bucket: this.bucket,
            Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
          }),
        );
        const failed = r.Errors?.[0];
        if (failed)
          throw new ObjectError('other', `could not delete ${failed.Key}: ${failed.Message}`, failed.Key);
      }
    });
  }

  copy(source: string, target: string, options?: WriteOptions): Promise<{ etag: string }> {
    return this.call(source, async () => {
      const r = await this.s3.send(
        new CopyObjectCommand({
          Bucket: this.bucket,
          Key: target,
          CopySource: copySource(this.bucket, source),
          MetadataDirective: options ? 'REPLACE' : 'COPY',
          Metadata: options?.metadata as Record<string, string> | undefined,
          ContentType: options?.contentType,
        }),
      );
      return { etag: stripQuotes(r.CopyObjectResult?.ETag) };
    });
  }

  createMultipart(key: string, options: WriteOptions = {}): Promise<string> {
    return this.call(key, async () => {
      const r = await this.s3.send(
        new CreateMultipartUploadCommand({
          Bucket: this.bucket,
          Key: key,
          Metadata: options.metadata as Record<string, string> | undefined,
          ContentType: options.contentType,
        }),
      );
      if (!r.UploadId) throw new ObjectError('other', 'CreateMultipartUpload returned no UploadId', key);
      return r.UploadId;
    });
  }

  async uploadPart(key: string, uploadId: string, partNumber: number, body: Buffer): Promise<string> {
    return (await this.data()).uploadPart(key, uploadId, partNumber, body);
  }

  uploadPartCopy(
    key: string,
    uploadId: string,
    partNumber: number,
    source: string,
    range: ByteRange,
  ): Promise<string> {
    return this.call(key, async () => {
      const r = await this.s3.send(
        new UploadPartCopyCommand({
          Bucket: this.bucket,
          Key: key,
          UploadId: uploadId,
          PartNumber: partNumber,
          CopySource: copySource(this.bucket, source),
          CopySourceRange: `bytes=${range.start}-${range.end - 1}`,
        }),
      );
      return stripQuotes(r.CopyPartResult?.ETag);
    });
  }

  completeMultipart(
    key: string,
    uploadId: string,
    parts: readonly CompletedPart[],
  ): Promise<{ etag: string }> {
    return this.call(key, async () => {
      const r = await this.s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.bucket,
          Key: key,
          UploadId: uploadId,
          MultipartUpload: { Parts: parts.map((p) => ({ PartNumber: p.partNumber, ETag: `"${p.etag}"` })) },
        }),
      );
      return { etag: stripQuotes(r.ETag) };
    });
  }

  async abortMultipart(key: string, uploadId: string): Promise<void> {
    try {
      await this.s3.send(
        new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId }),
      );
    } catch {
      // Best effort: s3rver does not implement it, and a server-side lifecycle rule cleans up.
    }
  }

  async checkBucket(): Promise<void> {
    try {
      await this.s3.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch (err) {
      const e = toObjectError(err, this.bucket);
      // HEAD has no body to name the error: a 404 on the bucket itself means it does not exist.
      if (e.kind === 'not-found') throw new ObjectError('no-such-bucket', e.message, this.bucket, err);
      throw e;
    }
  }

  destroy(): void {
    this.s3.destroy();
    void this.dataPath?.then(
      (d) => d.close(),
      () => undefined,
    );
  }
}
