// The mount's data path: ranged GETs, PUTs and UploadParts, signed with lib/sigv4.ts and sent
// through undici (http-exchange.ts) on sockets that read into memory they use again
// (pooled-socket.ts). The control calls (list, head, multipart create/complete/abort, copy,
// delete) stay with the AWS SDK in sdk-client.ts, which hands this its resolved credentials and
// endpoint, so both sign as the same identity and address the same URLs.
//
// Why not the SDK for these too: per GB read it cost 1.2–1.3 CPU s in a bare loop against 0.4 s
// here, and its fresh 64 KiB buffer per socket read made up most of the mount's peak memory
// (docs/BENCHMARKING.md, "What each mount costs the machine").
//
// Retries follow the SDK's standard mode, which the mount used before: up to `maxAttempts`
// attempts on resets, timeouts, 429 and 500/502/503/504, waiting a random time up to
// 100 ms × 2^attempt (500 ms × 2^attempt when throttled), at most 20 s. An attempt is the request
// and its whole body: a connection cut while a body streams is retried too, and a retried GET asks
// only for the bytes it does not have yet.

import { contentLength, type Credentials, header, HttpExchange, type Reply, type ReplyHeaders } from './http-exchange.ts';
import { type ByteRange, ObjectError, type ObjectHead, type OnPiece, type WriteOptions } from './object-client.ts';
import { toObjectError } from './sdk-errors.ts';
import type { SlabPool } from './slab-pool.ts';

export interface DataPathOptions {
  readonly bucketUrl: URL;
  readonly region: string;
  /** The SDK's resolved credential provider: its chain, its cache and its refresh. */
  readonly credentials: () => Promise<Credentials>;
  readonly maxAttempts: number;
  readonly idleTimeoutMs: number;
  readonly maxSockets: number;
  /** Where the pieces of getPieces are copied to from the socket's own buffers. */
  readonly slabs: SlabPool;
}

const RETRIED_STATUSES = new Set([429, 500, 502, 503, 504]);

const stripQuotes = (etag: string | undefined): string => (etag ?? '').replace(/"/g, '');

function retryable(e: ObjectError): boolean {
  if (e.kind === 'unavailable' || e.kind === 'throttled') return true;
  const status = (e.cause as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
  return status !== undefined && RETRIED_STATUSES.has(status);
}

function backoffMs(attempt: number, throttled: boolean): number {
  return Math.floor(Math.min(20_000, Math.random() * 2 ** attempt * (throttled ? 500 : 100)));
}

/** What a GET's headers say about the object, as a HEAD would. */
export function headOf(key: string, headers: ReplyHeaders, size: number): ObjectHead {
  const metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith('x-amz-meta-') && value !== undefined)
      metadata[name.slice('x-amz-meta-'.length)] = Array.isArray(value) ? value.join(',') : value;
  }
  const modified = new Date(header(headers, 'last-modified') ?? 0);
  return {
    key,
    size,
    etag: stripQuotes(header(headers, 'etag')),
    lastModified: Number.isNaN(modified.getTime()) ? new Date(0) : modified,
    metadata,
    contentType: header(headers, 'content-type'),
  };
}

function metadataHeaders(options: WriteOptions): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(options.metadata ?? {})) out[`x-amz-meta-${k.toLowerCase()}`] = v;
  if (options.contentType !== undefined) out['content-type'] = options.contentType;
  return out;
}

/** `bytes 0-99/5000`: the first byte and the object's size; undefined when the answer is whole. */
function contentRange(reply: Reply): { first: number; total: number } | undefined {
  const m = /^bytes (\d+)-\d+\/(\d+)$/.exec(header(reply.headers, 'content-range') ?? '');
  return m ? { first: Number(m[1]), total: Number(m[2]) } : undefined;
}

export class DataPath {
  private readonly http: HttpExchange;
  private readonly maxAttempts: number;
  private readonly slabs: SlabPool;

  constructor(options: DataPathOptions) {
    this.maxAttempts = options.maxAttempts;
    this.slabs = options.slabs;
    this.http = new HttpExchange(options);
  }

  private async attempts<T>(key: string, attempt: () => Promise<T>): Promise<T> {
    for (let n = 1; ; n++) {
      try {
        return await attempt();
      } catch (err) {
        const e = toObjectError(err, key);
        if (!retryable(e) || n >= this.maxAttempts) throw e;
        await new Promise((r) => setTimeout(r, backoffMs(n, e.kind === 'throttled')));
      }
    }
  }

  /**
   * One GET of `range` whose body goes to `onBytes` with the number of bytes the answer carries
   * for the range, counted against its Content-Length; resolves with its headers. Skips what a
   * server that ignored the range sent outside it. Servers that ignore If-Match (s3rver does)
   * still name the version they answer with: one that is not the version asked for is refused
   * before its body is read.
   */
  private async getOnce(
    key: string,
    range: ByteRange | undefined,
    onBytes: (view: Buffer, expected: number) => void,
  ): Promise<Reply> {
    const headers: Record<string, string> = {};
    if (range) headers.range = `bytes=${range.start}-${range.end - 1}`;
    if (range?.ifMatch !== undefined) headers['if-match'] = `"${range.ifMatch}"`;
    let length = 0;
    let skip = 0;
    let expected = 0;
    let got = 0;
    const reply = await this.http.send({
      method: 'GET',
      key,
      headers,
      onStart: (r) => {
        const etag = header(r.headers, 'etag');
        if (range?.ifMatch !== undefined && etag !== undefined && stripQuotes(etag) !== range.ifMatch)
          throw new ObjectError('changed', `${key} was replaced: ETag ${stripQuotes(etag)}, not ${range.ifMatch}`, key);
        length = contentLength(r, key);
        expected = length;
        if (range && r.status === 200) {
          skip = Math.min(range.start, length);
          expected = Math.min(range.end, length) - skip;
        }
      },
      onBytes: (view) => {
        got += view.length;
        if (got > length) throw new ObjectError('other', 'response body longer than its Content-Length', key);
        const from = Math.min(skip, view.length);
        skip -= from;
        const v = view.subarray(from, from + expected);
        expected -= v.length;
        if (v.length > 0) onBytes(v, v.length + expected);
      },
    });
    if (got !== length)
      throw new ObjectError('unavailable', `response body cut short at ${got} of ${length} bytes`, key);
    return reply;
  }

  /** See ObjectClient.getPieces: a retried attempt asks for the rest only. */
  getPieces(key: string, range: ByteRange, onPiece: OnPiece): Promise<number> {
    let got = 0;
    return this.attempts(key, async () => {
      const cutter = this.slabs.cutter();
      try {
        await this.getOnce(key, { ...range, start: range.start + got }, (view, left) => {
          got += view.length;
          onPiece(cutter.cut(view, left));
        });
      } finally {
        cutter.done();
      }
      return got;
    });
  }

  /** The bytes of `range` (or the whole object) in one buffer, with the answer's headers. */
  getBuffer(key: string, range?: ByteRange): Promise<{ body: Buffer; reply: Reply; size: number }> {
    return this.attempts(key, async () => {
      let body: Buffer | undefined;
      let at = 0;
      const reply = await this.getOnce(key, range, (view, left) => {
        body ??= Buffer.allocUnsafe(left);
        at += view.copy(body, at);
      });
      const size = contentRange(reply)?.total ?? contentLength(reply, key);
      return { body: (body ?? Buffer.alloc(0)).subarray(0, at), reply, size };
    });
  }

  /** The object's facts from a GET's answer (see ObjectClient.getWithHead). */
  headOf(key: string, got: { reply: Reply; size: number }): ObjectHead {
    return headOf(key, got.reply.headers, got.size);
  }

  put(key: string, body: Buffer, options: WriteOptions = {}): Promise<{ etag: string }> {
    return this.attempts(key, async () => {
      const r = await this.http.send({ method: 'PUT', key, body, headers: metadataHeaders(options) });
      return { etag: stripQuotes(header(r.headers, 'etag')) };
    });
  }

  uploadPart(key: string, uploadId: string, partNumber: number, body: Buffer): Promise<string> {
    return this.attempts(key, async () => {
      const r = await this.http.send({
        method: 'PUT',
        key,
        body,
        query: { partNumber: String(partNumber), uploadId },
      });
      return stripQuotes(header(r.headers, 'etag'));
    });
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
