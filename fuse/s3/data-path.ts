// The mount's data path: ranged GETs, PUTs and UploadParts, signed with lib/sigv4.ts and sent
// on connections of its own (http-exchange.ts, http1-pool.ts) whose sockets read into memory they
// use again. The control calls (list, head, multipart create/complete/abort, copy, delete) are in
// control-path.ts, on connections of their own, so a listing never waits behind readahead.
//
// Why not the AWS SDK: per GB read it cost 1.2–1.3 CPU s in a bare loop against 0.2 s here, and
// its fresh 64 KiB buffer per socket read made up most of the mount's peak memory
// (docs/BENCHMARKING.md, "What each mount costs the machine").
//
// Retries follow s3-errors.ts. An attempt is the request and its whole body: a connection cut
// while a body streams is retried too, and a retried GET asks only for the bytes it does not have
// yet.
//
// What an answer carries is taken from its own headers, not assumed to be the range asked for
// (get-answer.ts): a 206 must start at the byte asked for, a 200 is the whole object only where its
// length shows it, bytes past the range are dropped (a 200's rest is paused for the object's next
// GET, whole-bodies.ts), an answer that ends inside both the range and the object is followed by a
// GET for the rest, and a body without a Content-Length (chunked, as any HTTP/1.1 proxy may send)
// is read to its end. Each answer is held to the version the reader reads (read-version.ts).

import { type Credentials, header, HttpExchange, type Reply, type ReplyHeaders } from './http-exchange.ts';
import { type Answer, answerOf, sizeOf200 } from './get-answer.ts';
import type { Parked } from './http1-pool.ts';
import { type ByteRange, ObjectError, type ObjectHead, type OnPiece, type WriteOptions } from './object-client.ts';
import { withRetries } from './s3-errors.ts';
import { isWeak } from './read-version.ts';
import { stripQuotes } from './s3-replies.ts';
import type { SlabPool } from './slab-pool.ts';
import { type WholeBody, WholeBodies } from './whole-bodies.ts';

export interface DataPathOptions {
  readonly bucketUrl: URL;
  readonly region: string;
  /** The credentials to sign with, refreshed by their source when they expire (credentials.ts). */
  readonly credentials: () => Promise<Credentials>;
  readonly maxAttempts: number;
  readonly idleTimeoutMs: number;
  readonly maxSockets: number;
  /** Where the pieces of getPieces are copied to from the socket's own buffers. */
  readonly slabs: SlabPool;
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

const EMPTY = Buffer.alloc(0);

/** The ETag and Last-Modified of an answer, for read-version.ts. */
function factsOf(r: Reply): { etag: string | undefined; lastModified: number | undefined } {
  const etag = header(r.headers, 'etag');
  const ms = Date.parse(header(r.headers, 'last-modified') ?? '');
  return { etag: etag === undefined ? undefined : stripQuotes(etag), lastModified: Number.isNaN(ms) ? undefined : ms };
}

export function metadataHeaders(options: WriteOptions): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(options.metadata ?? {})) out[`x-amz-meta-${k.toLowerCase()}`] = v;
  if (options.contentType !== undefined) out['content-type'] = options.contentType;
  return out;
}

/**
 * Gathers a body's pieces into one buffer, sized by the first answer's length when it tells it;
 * what a later answer (or one without a length) brings is kept apart and joined at the end.
 */
function collector(): { add(view: Buffer, left: number): void; body(): Buffer } {
  let first: Buffer | undefined;
  let at = 0;
  const rest: Buffer[] = [];
  return {
    add: (view, left) => {
      if (first === undefined && at === 0 && Number.isFinite(left)) first = Buffer.allocUnsafe(left);
      if (first && rest.length === 0 && at + view.length <= first.length) at += view.copy(first, at);
      else rest.push(Buffer.from(view));
    },
    body: () => {
      const head = first ? first.subarray(0, at) : Buffer.alloc(0);
      return rest.length === 0 ? head : Buffer.concat([head, ...rest]);
    },
  };
}

export class DataPath {
  private readonly http: HttpExchange;
  private readonly maxAttempts: number;
  private readonly slabs: SlabPool;
  private readonly wholes = new WholeBodies();

  constructor(options: DataPathOptions) {
    this.maxAttempts = options.maxAttempts;
    this.slabs = options.slabs;
    this.http = new HttpExchange(options);
  }

  private attempts<T>(key: string, attempt: () => Promise<T>): Promise<T> {
    return withRetries(this.maxAttempts, key, attempt);
  }

  /**
   * One GET of `range` whose bytes of the range go to `onBytes`, with how many the answer still
   * carries for it (Infinity when unknown); resolves with its headers and the object's size when
   * it told it. Skips what a server that ignored the range sent outside it; once the range is in,
   * such a body is paused for the next GET of the object (whole-bodies.ts) or its connection
   * closed, never read to its end. Every answer is checked against the version asked for
   * (read-version.ts) before its body is read: servers that ignore If-Match (s3rver does) still
   * name the version they answer with.
   */
  private async getOnce(
    key: string,
    range: ByteRange | undefined,
    onBytes: (view: Buffer, left: number) => void,
    onReply?: (reply: Reply, size: number | undefined) => void,
  ): Promise<{ reply: Reply; size: number | undefined }> {
    const whole = range && (await this.wholes.take(key, range.start, range.end));
    if (whole) return this.readOn(key, range, whole, onBytes, onReply);
    const version = range?.version;
    const headers: Record<string, string> = version ? version.conditions() : {};
    if (range) headers.range = `bytes=${range.start}-${range.end - 1}`;
    if (!version && range?.ifMatch && !isWeak(range.ifMatch)) headers['if-match'] = `"${range.ifMatch}"`;
    let answer: Answer = { skip: 0, want: 0, length: 0, size: undefined };
    let got = 0;
    let cut = false;
    /** True while this body is the one later GETs of `key` wait for (whole-bodies.ts). */
    let shared = false;
    let carry = EMPTY;
    try {
      const { parked, ...reply } = await this.http.send({
        method: 'GET',
        key,
        headers,
        onStart: (r) => {
          const etag = header(r.headers, 'etag');
          if (!version && range?.ifMatch && etag !== undefined && stripQuotes(etag) !== range.ifMatch)
            throw new ObjectError('changed', `${key} was replaced: ETag ${stripQuotes(etag)}, not ${range.ifMatch}`, key);
          version?.check(key, factsOf(r));
          answer = answerOf(key, r, range);
          if (answer.size !== undefined) version?.check(key, { size: answer.size });
          if (r.status === 200 && range && answer.length !== undefined && answer.length > range.end)
            shared = this.wholes.streaming(key, range.end);
          onReply?.(r, answer.size);
        },
        onBytes: (view) => {
          got += view.length;
          if (answer.length !== undefined && got > answer.length)
            throw new ObjectError('other', 'response body longer than its Content-Length', key);
          const from = Math.min(answer.skip, view.length);
          answer.skip -= from;
          const v = view.subarray(from, from + Math.min(answer.want, view.length));
          answer.want -= v.length;
          if (v.length > 0) onBytes(v, v.length + answer.want);
          if (answer.want > 0 || answer.length === undefined || got >= answer.length) return undefined;
          if (shared) {
            carry = Buffer.from(view.subarray(from + v.length));
            return 'pause';
          }
          cut = true;
          return 'enough';
        },
      });
      if (parked) {
        const facts = { ...factsOf(reply), size: answer.length! };
        this.wholes.park(key, { parked, reply, facts, length: answer.length!, next: got - carry.length, carry });
        shared = false;
        return { reply, size: answer.size };
      }
      if (cut) return { reply, size: answer.size };
      if (answer.length !== undefined && got !== answer.length)
        throw new ObjectError('unavailable', `response body cut short at ${got} of ${answer.length} bytes`, key);
      if (reply.status !== 200 || answer.size !== undefined) return { reply, size: answer.size };
      // A whole object sent without a length ends where its body does.
      if (range && version?.size !== undefined && got !== version.size)
        throw new ObjectError('other', `a 200 of ${got} bytes answered a ranged GET of ${key} (${version.size} bytes)`, key);
      return { reply, size: sizeOf200(range, got) };
    } finally {
      if (shared) this.wholes.done(key);
    }
  }

  /** getOnce() from a whole body an earlier GET of `key` paused ahead of `range` (whole-bodies.ts). */
  private async readOn(
    key: string,
    range: ByteRange,
    whole: WholeBody,
    onBytes: (view: Buffer, left: number) => void,
    onReply?: (reply: Reply, size: number | undefined) => void,
  ): Promise<{ reply: Reply; size: number | undefined }> {
    try {
      if (range.ifMatch && !range.version && whole.facts.etag !== undefined && whole.facts.etag !== range.ifMatch)
        throw new ObjectError('changed', `${key}: ETag ${whole.facts.etag}, not ${range.ifMatch}`, key);
      range.version?.check(key, whole.facts);
    } catch {
      // Another version than this reader's: it asks for its own.
      whole.parked.close();
      this.wholes.done(key);
      return this.getOnce(key, range, onBytes, onReply);
    }
    const end = Math.min(range.end, whole.length);
    onReply?.(whole.reply, whole.length);
    let at = whole.next;
    let carry = EMPTY;
    const take = (view: Buffer): 'pause' | undefined => {
      const from = Math.min(Math.max(0, range.start - at), view.length);
      const to = Math.min(view.length, Math.max(from, end - at));
      if (to > from) onBytes(view.subarray(from, to), end - at - from);
      at += view.length;
      if (at < end || at >= whole.length) return undefined;
      carry = Buffer.from(view.subarray(to));
      at -= carry.length;
      return 'pause';
    };
    let shared = true;
    try {
      let parked: Parked | undefined = whole.parked;
      if (take(whole.carry) !== 'pause') parked = await whole.parked.resume({ onHead: () => undefined, onBody: take });
      if (parked) {
        this.wholes.park(key, { ...whole, parked, next: at, carry });
        shared = false;
      }
      return { reply: whole.reply, size: whole.length };
    } finally {
      if (shared) this.wholes.done(key);
    }
  }

  /**
   * The bytes of `range` to `onBytes`, in order, across as many GETs as it takes: a retried
   * attempt, and an answer that ends inside both the range and the object (a proxy that caps its
   * answers), ask for the bytes still missing only. The latter is not a failed attempt.
   */
  private getRange(
    key: string,
    range: ByteRange,
    onBytes: (view: Buffer, left: number) => void,
    around?: <T>(send: () => Promise<T>) => Promise<T>,
  ): Promise<{ reply: Reply | undefined; size: number | undefined; got: number }> {
    let got = 0;
    let reply: Reply | undefined;
    let size: number | undefined;
    const complete = () => range.start + got >= Math.min(range.end, size ?? Infinity);
    return this.attempts(key, async () => {
      while (!complete()) {
        const before = got;
        const send = () =>
          this.getOnce(
            key,
            { ...range, start: range.start + got },
            (view, left) => {
              got += view.length;
              onBytes(view, left);
            },
            (r, told) => {
              reply = r;
              size = told ?? size;
            },
          );
        try {
          size = (await (around ? around(send) : send())).size ?? size;
        } catch (err) {
          // A whole object (a 200) cut after the range: the range itself arrived.
          if (range.start + got >= range.end) break;
          throw err;
        }
        if (got === before && !complete())
          throw new ObjectError('unavailable', `answer for ${key} carried none of the bytes asked for`, key);
      }
      return { reply, size, got };
    });
  }

  /** See ObjectClient.getPieces: a retried attempt asks for the rest only. */
  async getPieces(key: string, range: ByteRange, onPiece: OnPiece): Promise<number> {
    let cut: ((view: Buffer, left: number) => Buffer) | undefined;
    const got = await this.getRange(
      key,
      range,
      (view, left) => onPiece(cut!(view, left)),
      async (send) => {
        const cutter = this.slabs.cutter();
        cut = cutter.cut;
        try {
          return await send();
        } finally {
          cutter.done();
        }
      },
    );
    return got.got;
  }

  /** The bytes of `range` (or the whole object) in one buffer, with the answer's headers. */
  async getBuffer(key: string, range?: ByteRange): Promise<{ body: Buffer; reply: Reply; size: number | undefined }> {
    if (!range) {
      return this.attempts(key, async () => {
        const into = collector();
        const once = await this.getOnce(key, undefined, into.add);
        return { body: into.body(), reply: once.reply, size: once.size ?? 0 };
      });
    }
    const into = collector();
    const got = await this.getRange(key, range, into.add);
    if (!got.reply) throw new ObjectError('other', `empty range asked of ${key}`, key);
    return { body: into.body(), reply: got.reply, size: got.size };
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
    this.wholes.close();
    return this.http.close();
  }
}
