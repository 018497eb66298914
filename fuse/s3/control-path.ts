// The mount's control calls — HEAD, listings, deletes, copies and the multipart bookkeeping — on
// the same signed HTTP/1.1 client as the data path (http-exchange.ts) but on connections of their
// own, so a listing never waits behind a window of readahead GETs. Their answers are XML, read by
// s3-replies.ts; their errors and retries are s3-errors.ts's. Settings chosen for S3-compatible
// servers as much as for AWS: Content-MD5 on DeleteObjects (Swift and MinIO require it, and
// every server takes it), URL-encoded keys in listings (url-keys.ts), a body's SHA-256 signed
// (these bodies are small; the data path's are not hashed).
//
// Every call is retried by the rules of the AWS SDK that made them before. Two are not
// idempotent: a CreateMultipartUpload whose answer was lost and is sent again leaves an upload
// nobody completes, which --abort-uploads-after removes; a CompleteMultipartUpload whose answer
// was lost may have completed the object, so when a retry is told the upload is gone, the key is
// asked (HEAD): the object these parts make (their multipart ETag) means it was stored; anything
// else is an error that says so, never "no such object". The pool never resends a POST itself
// (http1-pool.ts), so every resend goes through these rules.

import { createHash } from 'node:crypto';
import { EMPTY_SHA256 } from '../../lib/sigv4.ts';
import { headOf, metadataHeaders } from './data-path.ts';
import { contentLength, type ExchangeOptions, header, HttpExchange, type Reply } from './http-exchange.ts';
import {
  type ByteRange,
  type CompletedPart,
  type ListOptions,
  type ListPage,
  ObjectError,
  type ObjectHead,
  type PendingUpload,
  type WriteOptions,
} from './object-client.ts';
import { lacksOperation, outcomeUnknown, toObjectError, withRetries } from './s3-errors.ts';
import { completeBody, deleteBody, xmlCanCarry, etagOf, firstDeleteError, listPage, multipartEtag, uploadIdOf, uploadsPage } from './s3-replies.ts';
import { XML_LIMITS } from './xml.ts';
import { ListingProgress } from './listing-progress.ts';
import { utf8Marked } from './url-keys.ts';

export interface ControlPathOptions extends ExchangeOptions {
  readonly bucket: string;
  readonly maxAttempts: number;
}

interface Call {
  readonly method: 'GET' | 'PUT' | 'HEAD' | 'POST' | 'DELETE';
  /** Undefined: the bucket itself. */
  readonly key: string | undefined;
  readonly query?: Record<string, string>;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** The key an error names, when not `key`: the prefix listed, the source copied. */
  readonly about?: string;
}

/** Query parameters whose value is undefined are left out. */
function query(q: Record<string, string | number | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(q)) if (v !== undefined) out[k] = String(v);
  return out;
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

export class ControlPath {
  private readonly http: HttpExchange;
  private readonly bucket: string;
  private readonly maxAttempts: number;
  private clock: { store: number; local: number } | undefined;

  constructor(options: ControlPathOptions) {
    this.http = new HttpExchange(options);
    this.bucket = options.bucket;
    this.maxAttempts = options.maxAttempts;
  }

  /**
   * One attempt: the reply and its body as text (S3's XML is UTF-8; bytes that are not, as
   * url-keys.ts marks them), at most XML_LIMITS.maxChars.
   */
  private async once(call: Call): Promise<{ reply: Reply; body: string }> {
    const body = call.body === undefined ? undefined : Buffer.from(call.body, 'utf8');
    const pieces: Buffer[] = [];
    let size = 0;
    const reply = await this.http.send({
      method: call.method,
      key: call.key,
      query: call.query,
      headers: call.headers,
      // PUT and POST say their length, 0 included: Swift answers a PUT without one with 411.
      body: body ?? (call.method === 'PUT' || call.method === 'POST' ? Buffer.alloc(0) : undefined),
      payloadHash: body ? sha256(body) : EMPTY_SHA256,
      onBytes: (view) => {
        size += view.length;
        if (size > XML_LIMITS.maxChars)
          throw new ObjectError('other', `answer longer than ${XML_LIMITS.maxChars} bytes`, call.key);
        pieces.push(Buffer.from(view));
      },
    });
    const date = Date.parse(header(reply.headers, 'date') ?? '');
    if (Number.isFinite(date)) this.clock = { store: date, local: Date.now() };
    return { reply, body: utf8Marked(Buffer.concat(pieces)) };
  }

  /** The store's clock as its last answer's Date told it (to the second), or undefined. */
  storeNow(): number | undefined {
    return this.clock && this.clock.store + (Date.now() - this.clock.local);
  }

  private send(call: Call) {
    return withRetries(this.maxAttempts, call.about ?? call.key ?? this.bucket, () => this.once(call));
  }

  /** The reply's body read by `read`, inside the attempt: an <Error> in a 200 is retried. */
  private sendAndRead<T>(call: Call, read: (body: string) => T, onRetry?: (e: ObjectError) => void): Promise<T> {
    const about = call.about ?? call.key ?? this.bucket;
    return withRetries(this.maxAttempts, about, async () => read((await this.once(call)).body), onRetry);
  }

  async head(key: string): Promise<ObjectHead | undefined> {
    try {
      const { reply } = await this.send({ method: 'HEAD', key });
      const size = header(reply.headers, 'content-length') === undefined ? 0 : contentLength(reply, key);
      return headOf(key, reply.headers, size);
    } catch (err) {
      const e = toObjectError(err, key);
      if (e.kind === 'not-found') return undefined;
      throw e;
    }
  }

  list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const q = query({
      'list-type': 2,
      prefix,
      delimiter: options.delimiter,
      'continuation-token': options.continuationToken,
      'max-keys': options.maxKeys,
      // See url-keys.ts: one key with a control character would fail the whole listing.
      'encoding-type': 'url',
    });
    return this.sendAndRead({ method: 'GET', key: undefined, query: q, about: prefix }, listPage);
  }

  async listUploads(prefix: string): Promise<PendingUpload[]> {
    const out: PendingUpload[] = [];
    const progress = new ListingProgress(prefix);
    let next: { keyMarker?: string; uploadIdMarker?: string } = {};
    for (;;) {
      const q = query({
        uploads: '',
        prefix,
        'key-marker': next.keyMarker,
        'upload-id-marker': next.uploadIdMarker,
        'encoding-type': 'url',
      });
      const page = await this.sendAndRead({ method: 'GET', key: undefined, query: q, about: prefix }, uploadsPage);
      out.push(...page.uploads);
      if (!page.next) return out;
      progress.next(`${page.next.keyMarker}\n${page.next.uploadIdMarker ?? ''}`);
      next = page.next;
    }
  }

  async delete(key: string): Promise<void> {
    await this.send({ method: 'DELETE', key });
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    // A key XML 1.0 cannot carry (most control characters, not even as &#x1;) would make the
    // whole batch malformed (MinIO and Swift refuse it): such keys go one by one.
    const carried = keys.filter(xmlCanCarry);
    for (const key of keys) if (!xmlCanCarry(key)) await this.delete(key);
    // One request takes at most 1000 keys.
    for (let i = 0; i < carried.length; i += 1000) {
      const body = deleteBody(carried.slice(i, i + 1000));
      const headers = {
        'content-md5': createHash('md5').update(body, 'utf8').digest('base64'),
        'content-type': 'application/xml',
      };
      const call: Call = { method: 'POST', key: undefined, query: { delete: '' }, headers, body, about: carried[i] };
      const failed = await this.sendAndRead(call, firstDeleteError);
      if (failed) throw new ObjectError('other', `could not delete ${failed.key}: ${failed.message}`, failed.key);
    }
  }

  /** CopySource is `bucket/key` with the key URL-encoded but its slashes kept. */
  private copySource(key: string): string {
    return `${this.bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
  }

  copy(source: string, target: string, options?: WriteOptions): Promise<{ etag: string }> {
    const headers: Record<string, string> = {
      'x-amz-copy-source': this.copySource(source),
      'x-amz-metadata-directive': options ? 'REPLACE' : 'COPY',
      ...(options ? metadataHeaders(options) : {}),
    };
    const call: Call = { method: 'PUT', key: target, headers, about: source };
    return this.sendAndRead(call, (b) => ({ etag: etagOf(b, 'CopyObjectResult') }));
  }

  createMultipart(key: string, options: WriteOptions = {}): Promise<string> {
    const call: Call = { method: 'POST', key, query: { uploads: '' }, headers: metadataHeaders(options) };
    return this.sendAndRead(call, uploadIdOf);
  }

  uploadPartCopy(key: string, uploadId: string, partNumber: number, source: string, range: ByteRange): Promise<string> {
    const headers = {
      'x-amz-copy-source': this.copySource(source),
      'x-amz-copy-source-range': `bytes=${range.start}-${range.end - 1}`,
      ...(range.ifMatch ? { 'x-amz-copy-source-if-match': `"${range.ifMatch}"` } : {}),
    };
    const call: Call = { method: 'PUT', key, query: { partNumber: String(partNumber), uploadId }, headers };
    return this.sendAndRead(call, (b) => etagOf(b, 'CopyPartResult'));
  }

  async completeMultipart(key: string, uploadId: string, parts: readonly CompletedPart[]): Promise<{ etag: string }> {
    let lost = false;
    const call: Call = {
      method: 'POST',
      key,
      query: { uploadId },
      headers: { 'content-type': 'application/xml' },
      body: completeBody(parts),
    };
    try {
      return { etag: await this.sendAndRead(call, (b) => etagOf(b, 'CompleteMultipartUploadResult'), (e) => (lost ||= outcomeUnknown(e))) };
    } catch (err) {
      const e = toObjectError(err, key);
      if (!lost || e.kind !== 'not-found') throw e;
      const why = `completing the upload of ${key}: an earlier attempt's answer was lost and the upload is gone`;
      // That attempt completed it if the key now holds the object these parts make.
      const expected = multipartEtag(parts);
      if (expected === undefined)
        throw new ObjectError('other', `${why}, so that attempt may have stored the object; read it back to know`, key, e);
      const head = await this.head(key);
      if (head?.etag.toLowerCase() === expected) return { etag: head.etag };
      throw new ObjectError('other', `${why}, and the bucket does not hold the object those parts make`, key, e);
    }
  }

  /**
   * Rejects when the server does not take the abort, so that the caller can try again later
   * (late-aborts.ts), and with 'not-found' when it no longer knows the upload. A server without
   * the operation (405 MethodNotAllowed from s3rver, or 501 NotImplemented) keeps nothing a later
   * try could free.
   */
  async abortMultipart(key: string, uploadId: string): Promise<void> {
    try {
      await this.send({ method: 'DELETE', key, query: { uploadId } });
    } catch (err) {
      if (!lacksOperation(err)) throw err;
    }
  }

  /**
   * HeadBucket; for a mount of a prefix, when that is denied, a listing under the prefix: AWS
   * refuses HeadBucket to keys whose s3:ListBucket holds only for `s3:prefix` (the usual policy
   * for a project's prefix), which may do all a mount of that prefix does. mountpoint-s3 checks
   * with a ListObjectsV2 for this reason; s3fs retries its check with the directory.
   */
  async checkBucket(prefix = ''): Promise<void> {
    try {
      await this.send({ method: 'HEAD', key: undefined });
    } catch (err) {
      const e = toObjectError(err, this.bucket);
      if (e.kind === 'access-denied' && prefix !== '') {
        await this.list(prefix, { delimiter: '/', maxKeys: 1 });
        return;
      }
      // HEAD has no body to name the error: a 404 on the bucket itself means it does not exist.
      if (e.kind === 'not-found') throw new ObjectError('no-such-bucket', e.message, this.bucket, err);
      throw e;
    }
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
