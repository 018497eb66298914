// The only file of `estuary stage` that talks S3 (the AWS SDK): listing, heads, ranged reads, and
// multipart uploads whose parts the caller tracks itself (so a transfer resumes after a crash).

import { createHash, type Hash } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { Readable, Transform } from 'node:stream';
import { contentMd5, etagMd5, type Entry } from './plan.ts';
import { stageErrors } from './errors.ts';

/** Chunk of a file read for sending: 64 KiB, the socket's own write size, keeps buffers few and small. */
const READ_CHUNK = 64 * 1024;

/**
 * The bytes [start, end) of a file as a request body, every chunk fed to `hash` (and counted) on
 * its way out. A file that turns out shorter than that (truncated while it was being sent) fails
 * the body and aborts the request, which would otherwise wait for ever for the missing bytes.
 */
function fileBody(file: string, start: number, end: number, hash: Hash, onBytes?: (n: number) => void, cut?: AbortSignal): { body: Readable; signal: AbortSignal; failure: () => Error | undefined } {
  const abort = new AbortController();
  cut?.addEventListener('abort', () => abort.abort(), { once: true });
  let failure: Error | undefined;
  let sent = 0;
  // An empty range reads nothing (createReadStream has no empty range: no `end` reads to EOF).
  const source: Readable = end > start ? createReadStream(file, { start, end: end - 1, highWaterMark: READ_CHUNK }) : Readable.from([]);
  const body = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      hash.update(chunk);
      sent += chunk.length;
      onBytes?.(chunk.length);
      cb(null, chunk);
    },
    flush(cb) {
      cb(sent === end - start ? null : new Error(CHANGED));
    },
  });
  const fail = (err: Error) => {
    failure ??= err;
    abort.abort();
  };
  source.on('error', (err) => body.destroy(err));
  body.on('error', fail);
  source.pipe(body);
  return { body, signal: abort.signal, failure: () => failure };
}

/**
 * Longest listing response read: a page of 1,000 keys of 1,024 bytes each, every byte escaped as
 * an XML entity, is under 8 MiB. The SDK buffers a response body whole before parsing it, so a
 * store that sends a body without end would otherwise fill memory.
 */
const MAX_LISTING_BYTES = 16 * 2 ** 20;
/** S3 sends at most 1,000 keys a page; compatible stores that allow more stay far below this. */
const MAX_PAGE_KEYS = 10_000;
/**
 * Pages in a row without an object to copy before a listing is taken for a loop. Versioned
 * buckets can give a few empty pages (delete markers); a thousand in a row is a broken store.
 */
const MAX_EMPTY_PAGES = 1000;

/** The last continuation tokens of a listing (hashed, a bounded number): a repeat is a loop. */
class RecentTokens {
  readonly #seen = new Set<string>();

  /** False when `token` was given before (within the last 10,000 pages). */
  add(token: string): boolean {
    const id = createHash('sha256').update(token).digest('base64');
    if (this.#seen.has(id)) return false;
    this.#seen.add(id);
    if (this.#seen.size > 10_000) this.#seen.delete(this.#seen.values().next().value!);
    return true;
  }
}

/**
 * Fails a command whose response body grows past `max` bytes, before the SDK has buffered more:
 * a middleware just inside the deserializer wraps the body in a counting stream.
 */
function capResponseBody(command: ListObjectsV2Command, max: number): void {
  command.middlewareStack.add(
    (next) => async (args) => {
      const out = await next(args);
      const res = out.response as { body?: unknown };
      if (res.body instanceof Readable) {
        const source = res.body;
        let n = 0;
        const capped = new Transform({
          transform(chunk: Buffer, _enc, cb) {
            n += chunk.length;
            if (n <= max) return cb(null, chunk);
            source.destroy();
            cb(Object.assign(new Error(`listing response over ${max} bytes`), { listingTooLarge: true }));
          },
        });
        source.on('error', (err) => capped.destroy(err));
        res.body = source.pipe(capped);
      }
      return out;
    },
    { step: 'deserialize', priority: 'low', name: 'estuaryCapResponseBody' },
  );
}

/** What a transfer says when a file is modified under it. */
export const CHANGED = 'the file changed while it was being uploaded; run again to copy the new content';

export interface StoreOptions {
  readonly endpoint?: string;
  readonly region: string;
  /** A credential file as `estuary gateway credentials issue` prints it (JSON). */
  readonly credentialsFile?: string;
  /** A request or response body idle this long fails (and is retried); also the connect timeout. */
  readonly timeoutMs: number;
}

export interface RemoteEntry extends Entry {
  readonly key: string;
  readonly etag?: string;
}

function credentialsFrom(file: string | undefined) {
  if (!file) return undefined; // the SDK's chain: AWS_* variables, AWS_PROFILE, instance roles
  let c: { AccessKeyId?: string; SecretAccessKey?: string; SessionToken?: string };
  try {
    c = JSON.parse(readFileSync(file, 'utf8')) as typeof c;
  } catch (err) {
    throw stageErrors.credentials(file, (err as NodeJS.ErrnoException).code ?? 'not JSON');
  }
  if (!c.AccessKeyId || !c.SecretAccessKey) throw stageErrors.credentials(file, 'no AccessKeyId/SecretAccessKey');
  return { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken };
}

export class Store {
  readonly #s3: S3Client;
  readonly bucket: string;

  constructor(o: StoreOptions, bucket: string) {
    this.bucket = bucket;
    this.#s3 = new S3Client({
      endpoint: o.endpoint,
      region: o.region,
      forcePathStyle: o.endpoint !== undefined,
      credentials: credentialsFrom(o.credentialsFile),
      // S3-compatible stores and the gateway take plain bodies, not aws-chunked ones.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 5,
      // Without these a store that stops sending holds a request open for ever. The socket
      // timeout is an idle timeout: it fires after timeoutMs without a byte, also in the middle
      // of an object's body, and the SDK retries it (TimeoutError is transient to its retries).
      requestHandler: { socketTimeout: o.timeoutMs, connectionTimeout: o.timeoutMs },
    });
  }

  /**
   * Every object under `prefix`, one page (up to 1000, the store's choice) at a time. A store that
   * breaks the protocol ends the listing with ESTUARY_STAGE_STORE rather than looping or silently
   * stopping: a page body over MAX_LISTING_BYTES or of more than MAX_PAGE_KEYS keys, a truncated
   * page without a continuation token, a token it gave before, or MAX_EMPTY_PAGES pages in a row
   * with nothing to copy.
   */
  async *pages(prefix: string, signal?: AbortSignal): AsyncGenerator<RemoteEntry[]> {
    const where = `listing s3://${this.bucket}/${prefix}`;
    const tokens = new RecentTokens();
    let token: string | undefined;
    let empty = 0;
    for (;;) {
      const command = new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token });
      capResponseBody(command, MAX_LISTING_BYTES);
      const r = await this.#s3.send(command, { abortSignal: signal }).catch((err: unknown) => {
        if ((err as { listingTooLarge?: boolean }).listingTooLarge) throw stageErrors.protocol(where, `a page longer than ${MAX_LISTING_BYTES / 2 ** 20} MiB`);
        throw err;
      });
      if ((r.Contents?.length ?? 0) > MAX_PAGE_KEYS) throw stageErrors.protocol(where, `a page of ${r.Contents!.length} keys (S3 sends at most 1000)`);
      const page: RemoteEntry[] = [];
      for (const o of r.Contents ?? []) {
        if (!o.Key || o.Key.endsWith('/') || !o.Key.startsWith(prefix)) continue;
        page.push({ key: o.Key, rel: o.Key.slice(prefix.length), size: o.Size ?? 0, etag: o.ETag, md5: etagMd5(o.ETag) });
      }
      yield page;
      if (!r.IsTruncated) return;
      token = r.NextContinuationToken;
      if (!token) throw stageErrors.protocol(where, 'a page marked truncated without a continuation token (objects after it would be missed)');
      if (!tokens.add(token)) throw stageErrors.protocol(where, 'a continuation token it gave before (the listing would loop)');
      empty = page.length === 0 ? empty + 1 : 0;
      if (empty >= MAX_EMPTY_PAGES) throw stageErrors.protocol(where, `${MAX_EMPTY_PAGES} pages in a row without an object`);
    }
  }

  /** The whole listing, refused past `maxObjects` (it is held in memory). */
  async list(prefix: string, maxObjects: number, signal?: AbortSignal): Promise<RemoteEntry[]> {
    const out: RemoteEntry[] = [];
    for await (const page of this.pages(prefix, signal)) {
      out.push(...page);
      if (out.length > maxObjects) throw stageErrors.tooMany(`s3://${this.bucket}/${prefix}`, maxObjects);
    }
    return out;
  }

  /** What the store holds under `key`: size, recorded SHA-256, and the MD5 where the ETag is one. */
  async head(key: string, signal?: AbortSignal): Promise<{ size: number; etag?: string; md5?: string; sha256?: string } | undefined> {
    try {
      const r = await this.#s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }), { abortSignal: signal });
      return { size: r.ContentLength ?? 0, etag: r.ETag, md5: contentMd5(r.ETag, encryptionOf(r)), sha256: r.Metadata?.sha256 };
    } catch (err) {
      if ((err as { name?: string }).name === 'NotFound') return undefined;
      throw err;
    }
  }

  /**
   * `key` from byte `from` on. With `etag`, only if the object is still that one: undefined when
   * it changed (the caller starts over). Says what the object is: ETag, whole size, recorded hash.
   */
  async read(
    key: string,
    from: number,
    etag?: string,
    signal?: AbortSignal,
  ): Promise<{ body: Readable; etag: string; md5?: string; size: number | undefined; sha256?: string } | undefined> {
    try {
      const r = await this.#s3.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: from > 0 ? `bytes=${from}-` : undefined, IfMatch: etag }),
        { abortSignal: signal },
      );
      const total = /\/(\d+)$/.exec(r.ContentRange ?? '')?.[1];
      return {
        body: r.Body as Readable,
        etag: r.ETag ?? '',
        md5: contentMd5(r.ETag, encryptionOf(r)),
        // Neither (a chunked answer from a proxy, or a store streaming from its backend): unknown.
        size: total !== undefined ? Number(total) : r.ContentLength,
        sha256: r.Metadata?.sha256,
      };
    } catch (err) {
      const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (etag && (status === 412 || (err as { name?: string }).name === 'PreconditionFailed')) return undefined;
      throw err;
    }
  }

  /**
   * One PUT; resolves with the ETag the store gave it and the MD5 of the bytes sent, hashed as
   * they went out (a single-part ETag is the MD5 of what the store received), so the file is read
   * once for sending, not a second time to hash it.
   */
  async put(key: string, file: string, size: number, sha256: string, onBytes?: (n: number) => void, cut?: AbortSignal): Promise<{ etag?: string; stored?: string; md5: string }> {
    const md5 = createHash('md5');
    const b = fileBody(file, 0, size, md5, onBytes, cut);
    const r = await this.#s3
      .send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: b.body, ContentLength: size, Metadata: { sha256 } }), { abortSignal: b.signal })
      .catch((err: unknown) => {
        throw b.failure() ?? err;
      });
    return { etag: r.ETag, stored: contentMd5(r.ETag, encryptionOf(r)), md5: md5.digest('hex') };
  }

  async createUpload(key: string, sha256: string, signal?: AbortSignal): Promise<string> {
    const r = await this.#s3.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, Metadata: { sha256 } }), { abortSignal: signal });
    if (!r.UploadId) throw new Error('the store gave no upload id');
    return r.UploadId;
  }

  /** One part; resolves with its ETag and the MD5 of the bytes sent (a part's ETag is their MD5). */
  async uploadPart(
    key: string,
    uploadId: string,
    n: number,
    file: string,
    range: { start: number; end: number },
    onBytes?: (n: number) => void,
    cut?: AbortSignal,
  ): Promise<{ etag: string; stored?: string; md5: string }> {
    const { start, end } = range;
    const md5 = createHash('md5');
    const b = fileBody(file, start, end, md5, onBytes, cut);
    const r = await this.#s3
      .send(
        new UploadPartCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, PartNumber: n, Body: b.body, ContentLength: end - start }),
        { abortSignal: b.signal },
      )
      .catch((err: unknown) => {
        throw b.failure() ?? err;
      });
    if (!r.ETag) throw new Error(`the store gave no ETag for part ${n}`);
    return { etag: r.ETag, stored: contentMd5(r.ETag, encryptionOf(r)), md5: md5.digest('hex') };
  }

  async complete(key: string, uploadId: string, parts: readonly { n: number; etag: string }[], signal?: AbortSignal): Promise<void> {
    await this.#s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: this.bucket,
        Key: key,
        UploadId: uploadId,
        MultipartUpload: { Parts: parts.map((p) => ({ PartNumber: p.n, ETag: p.etag })) },
      }),
      { abortSignal: signal },
    );
  }

  async abort(key: string, uploadId: string): Promise<void> {
    await this.#s3.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId })).catch(() => undefined);
  }

  destroy(): void {
    this.#s3.destroy();
  }
}

/** The encryption headers of a response, which say whether its ETag can be an MD5. */
function encryptionOf(r: { ServerSideEncryption?: string; SSECustomerAlgorithm?: string }): { sse?: string; sseCustomerAlgorithm?: string } {
  return { sse: r.ServerSideEncryption, sseCustomerAlgorithm: r.SSECustomerAlgorithm };
}

/** True for an error that means the upload id is gone (aborted, expired, completed elsewhere). */
export function isNoSuchUpload(err: unknown): boolean {
  return (err as { name?: string }).name === 'NoSuchUpload';
}
