// One signed request to the bucket and its answer, over connections of its own (http1-pool.ts):
// the status and headers, and a success's body handed on as it arrives. No retries here
// (data-path.ts and control-path.ts do them); a failure is thrown as what toObjectError
// (s3-errors.ts) understands.

import { sign, UNSIGNED_PAYLOAD, uriEncode } from '../../lib/sigv4.ts';
import { Http1Pool, type Parked } from './http1-pool.ts';
import type { ResponseEvents, ResponseHeaders } from './http1-response.ts';
import { ObjectError } from './object-client.ts';
import { errorOf, type S3ReplyError } from './s3-replies.ts';

export interface Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

export type ReplyHeaders = Readonly<Record<string, string | string[] | undefined>>;

export interface Reply {
  readonly status: number;
  readonly headers: ReplyHeaders;
}

export interface ExchangeRequest {
  readonly method: 'GET' | 'PUT' | 'HEAD' | 'POST' | 'DELETE';
  /** The object's key; undefined for a request to the bucket itself. */
  readonly key: string | undefined;
  /** Query parameters, unencoded; `?uploads=` for a flag, as the AWS SDK sends it. */
  readonly query?: Readonly<Record<string, string>>;
  /** Lower-case names; x-amz-* ones are signed with the rest. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: Buffer;
  /** x-amz-content-sha256: the body's hex SHA-256, or (the default) UNSIGNED-PAYLOAD. */
  readonly payloadHash?: string;
  /**
   * A success's headers, before its body; throwing refuses the body (the request fails with
   * that error).
   */
  readonly onStart?: (reply: Reply) => void;
  /**
   * A success's body, piece by piece: a view that is valid only during the call. 'enough' ends
   * the answer there and closes its connection, 'pause' stops reading it for now (see
   * http1-response.ts).
   */
  readonly onBytes?: (view: Buffer) => unknown;
}

export interface ExchangeOptions {
  /** The bucket's base URL: path-style (`https://host/bucket`) or virtual-host (`https://bucket.host`). */
  readonly bucketUrl: URL;
  readonly region: string;
  readonly credentials: () => Promise<Credentials>;
  readonly idleTimeoutMs: number;
  readonly maxSockets: number;
}

/** The SDK's threshold: a store whose clock is this far from ours is said to be skewed. */
const CLOCK_SKEW_MS = 240_000;

/** An error answer: at most this much of its XML is read, enough for Code and Message. */
const ERROR_BODY_LIMIT = 16 * 1024;

export class HttpExchange {
  private readonly pool: Http1Pool;
  private readonly options: ExchangeOptions;
  /** The bucket's path, without a trailing slash, that every key's path starts with. */
  private readonly basePath: string;
  /** The store's clock minus this machine's, as its error answers tell it. */
  private clockOffsetMs = 0;

  constructor(options: ExchangeOptions) {
    this.options = options;
    this.basePath = options.bucketUrl.pathname.replace(/\/+$/, '');
    // The socket's idle timeout is --request-timeout; a large part upload may take longer than
    // that in all, and a slow answer is not a dead one.
    this.pool = new Http1Pool({
      url: options.bucketUrl,
      maxSockets: options.maxSockets,
      connectTimeoutMs: 5000,
      idleTimeoutMs: options.idleTimeoutMs,
    });
  }

  /** The key's path as S3 clients send it: each segment encoded once, the slashes kept. */
  private path(key: string | undefined): string {
    if (key === undefined) return this.basePath || '/';
    return `${this.basePath}/${key.split('/').map(uriEncode).join('/')}`;
  }

  /** The answer's status and headers, and its handle when onBytes paused it ('pause'). */
  async send(req: ExchangeRequest): Promise<Reply & { readonly parked?: Parked }> {
    const path = this.path(req.key);
    const query = Object.entries(req.query ?? {})
      .map(([k, v]) => `${uriEncode(k)}=${uriEncode(v)}`)
      .join('&');
    const credentials = await this.options.credentials();
    let sentAt = Date.now();
    // Signed when the pool has a connection for it (and again for its one resend), so that a
    // wait behind busy connections does not age its x-amz-date.
    const signed = () => {
      sentAt = Date.now();
      const headers = sign(
        { method: req.method, path, query, headers: req.headers ?? {}, host: this.options.bucketUrl.host },
        credentials,
        this.options.region,
        // Data stays unhashed; TCP (and TLS where used) carry the bytes, as in the SDK client this
        // replaced: hashing every part with SHA-256 was the largest CPU cost of uploads.
        req.payloadHash ?? UNSIGNED_PAYLOAD,
        sentAt + this.clockOffsetMs,
      );
      // The pool writes Host and Content-Length itself.
      delete headers.host;
      return headers;
    };
    const answer = new Answer(req);
    const parked = await this.pool.request(
      { method: req.method, path: query ? `${path}?${query}` : path, headers: {}, headersWhenSent: signed, body: req.body },
      answer,
    );
    let reply: Reply;
    try {
      reply = answer.result();
    } catch (err) {
      this.correctClock(err as S3ReplyError, answer.head(), sentAt);
      throw err;
    }
    return parked ? { ...reply, parked } : reply;
  }

  /**
   * The AWS SDK's clock skew correction (@aws-sdk/core's getUpdatedSystemClockOffset): an error
   * answer's Date sets the offset requests are signed with, and an offset of 4 minutes or more
   * that changed marks the error `clockSkewCorrected`, which is retried (s3-errors.ts). A clock an
   * hour off is then one refused request, not a mount that reports its keys denied.
   */
  private correctClock(err: S3ReplyError, reply: Reply, sentAt: number): void {
    const date = header(reply.headers, 'date');
    if (date === undefined || header(reply.headers, 'age') !== undefined) return;
    const server = Date.parse(date);
    const now = Date.now();
    if (Number.isNaN(server) || now - sentAt > 900_000) return;
    const before = this.clockOffsetMs;
    this.clockOffsetMs = server - now;
    if (Math.abs(this.clockOffsetMs) >= CLOCK_SKEW_MS && this.clockOffsetMs !== before) err.clockSkewCorrected = true;
  }

  async close(): Promise<void> {
    this.pool.close();
  }
}

/** Collects one answer: a success's body goes to the request's onBytes, an error's is kept. */
class Answer implements ResponseEvents {
  private reply: Reply | undefined;
  private errorBody = '';
  private readonly req: ExchangeRequest;

  constructor(req: ExchangeRequest) {
    this.req = req;
  }

  onHead(status: number, headers: ResponseHeaders): void {
    this.reply = { status, headers };
    if (status < 300) this.req.onStart?.(this.reply);
  }

  onBody(view: Buffer): unknown {
    if (this.reply!.status < 300) return this.req.onBytes?.(view);
    this.errorBody += view.toString('utf8', 0, Math.min(view.length, ERROR_BODY_LIMIT - this.errorBody.length));
    // Past the limit the rest is not read: an error body that never ends (bytes trickling in, so
    // the idle timeout never fires) would hold the call forever. The connection goes with it.
    if (this.errorBody.length >= ERROR_BODY_LIMIT) return 'enough';
    return undefined;
  }

  head(): Reply {
    return this.reply!;
  }

  /**
   * The reply once the answer was read whole; an error answer is thrown, with the region the
   * store says the bucket is in when it says so (a 301, or a 400 for a request signed for
   * another region: the header, or `<Region>` in the body).
   */
  result(): Reply {
    const reply = this.reply!;
    if (reply.status < 300) return reply;
    const err = errorOf(reply.status, this.errorBody);
    const region = header(reply.headers, 'x-amz-bucket-region') ?? /<Region>([a-z0-9-]{1,63})<\/Region>/.exec(this.errorBody)?.[1];
    if (region && (reply.status === 301 || reply.status === 400)) err.bucketRegion = region;
    throw err;
  }
}

/** A header's one value (the first, when it was sent more than once). */
export function header(headers: ReplyHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** A success's Content-Length; call only when it has one (a chunked answer has none). */
export function contentLength(reply: Reply, key: string): number {
  const n = Number(header(reply.headers, 'content-length'));
  if (!Number.isSafeInteger(n) || n < 0)
    throw new ObjectError('other', `answer for ${key} has no valid Content-Length`, key);
  return n;
}
