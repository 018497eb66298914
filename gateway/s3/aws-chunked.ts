// Decoding `Content-Encoding: aws-chunked` upload bodies, so the store receives the plain object.
//
// Current SDKs frame streamed uploads this way by default: each chunk is `<hex size>\r\n<data>\r\n`
// (with `;chunk-signature=<hex>` after the size when the payload is signed), a last chunk of size
// 0, then, for the -TRAILER variants, trailing header lines (the object's checksum, and for signed
// payloads `x-amz-trailer-signature`) and an empty line. Stores that do not speak it store the
// framing as data or refuse the upload, and the gateway cannot pass it on anyway: the chunk
// signatures chain from the client's request signature, made with a key the store never saw.
// So the gateway checks every chunk signature, the trailer signature and the trailer checksum
// itself and hands on only the data.
//
// The decoder is a push parser with no I/O: feed it what arrives, take the data it returns, and
// call end() at the end of the body. Every malformed input is a ChunkedError carrying the S3
// error code to answer with; nothing here throws anything else.

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { CHECKSUM_HEADERS, type Checksum, checksumFor } from './checksums.ts';
import type { S3ErrorCode } from './errors.ts';
import { EMPTY_SHA256 } from '../../lib/sigv4.ts';

export const STREAMING_SIGNED = 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD';
export const STREAMING_SIGNED_TRAILER = 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER';
export const STREAMING_UNSIGNED_TRAILER = 'STREAMING-UNSIGNED-PAYLOAD-TRAILER';

/** A chunk header line is a 16-digit size and a 64-digit signature at most; anything far longer is not one. */
const MAX_LINE = 256;
/** Trailer lines together: a checksum and a signature fit many times over. */
const MAX_TRAILER = 4096;

export class ChunkedError extends Error {
  readonly s3Code: S3ErrorCode;
  constructor(s3Code: S3ErrorCode, message: string) {
    super(message);
    this.s3Code = s3Code;
  }
}

/** What the chunk signatures are checked with: the request's own signature and signing key. */
export interface ChunkSigning {
  /** Signing key of the request's credential scope (sigv4.signingKey). */
  readonly key: Buffer;
  /** x-amz-date of the request. */
  readonly amzDate: string;
  /** `DATE/REGION/s3/aws4_request`. */
  readonly scope: string;
  /** The Authorization header's signature, which the first chunk's signature chains from. */
  readonly seed: string;
}

export interface ChunkedOptions {
  /** x-amz-content-sha256 of the request: one of the STREAMING-* values above. */
  readonly payload: string;
  /** x-amz-decoded-content-length: the exact number of data bytes. */
  readonly decodedLength: number;
  /** x-amz-trailer: the trailing header the client promised (its checksum), if any. */
  readonly trailer?: string;
  /** Required for the signed variants. */
  readonly signing?: ChunkSigning;
}

type State = 'size' | 'data' | 'data-end' | 'trailer' | 'done';

/** Checks the request headers of an aws-chunked upload; returns an error message or undefined. */
export function chunkedProblem(o: Omit<ChunkedOptions, 'signing'>): ChunkedError | undefined {
  const known = [STREAMING_SIGNED, STREAMING_SIGNED_TRAILER, STREAMING_UNSIGNED_TRAILER];
  if (!known.includes(o.payload)) {
    return new ChunkedError('NotImplemented', `x-amz-content-sha256 ${o.payload} is not supported; use ${known.join(', ')} or a plain body`);
  }
  if (!Number.isSafeInteger(o.decodedLength) || o.decodedLength < 0) {
    return new ChunkedError('MissingContentLength', 'an aws-chunked upload must carry x-amz-decoded-content-length');
  }
  const wantsTrailer = o.payload !== STREAMING_SIGNED;
  if (wantsTrailer && o.trailer !== undefined && !checksumFor(o.trailer)) {
    return new ChunkedError('InvalidRequest', `x-amz-trailer ${o.trailer} is not a checksum the gateway can check (${CHECKSUM_HEADERS.join(', ')})`);
  }
  if (!wantsTrailer && o.trailer !== undefined) {
    return new ChunkedError('InvalidRequest', `x-amz-trailer needs a -TRAILER payload, not ${o.payload}`);
  }
  return undefined;
}

export class AwsChunkedDecoder {
  readonly #o: ChunkedOptions;
  readonly #signed: boolean;
  readonly #checksum: Checksum | undefined;
  #state: State = 'size';
  #line = Buffer.alloc(0);
  #trailer = '';
  #remaining = 0;
  #chunkSig = '';
  #chunkHash = createHash('sha256');
  #previous: string;
  #decoded = 0;

  constructor(o: ChunkedOptions) {
    const problem = chunkedProblem(o);
    if (problem) throw problem;
    this.#o = o;
    this.#signed = o.payload !== STREAMING_UNSIGNED_TRAILER;
    if (this.#signed && !o.signing) throw new ChunkedError('InvalidRequest', 'a signed aws-chunked upload needs its request signature');
    this.#previous = o.signing?.seed ?? '';
    this.#checksum = o.trailer ? checksumFor(o.trailer) : undefined;
  }

  /** Bytes of data decoded so far. */
  get decoded(): number {
    return this.#decoded;
  }

  /** Feeds the next bytes of the body; returns the data they complete (possibly none). */
  push(input: Buffer): Buffer[] {
    const out: Buffer[] = [];
    let at = 0;
    while (at < input.length) {
      if (this.#state === 'data') {
        const n = Math.min(this.#remaining, input.length - at);
        const data = input.subarray(at, at + n);
        at += n;
        this.#remaining -= n;
        this.#decoded += n;
        if (this.#signed) this.#chunkHash.update(data);
        this.#checksum?.update(data);
        out.push(data);
        if (this.#remaining === 0) {
          this.#state = 'data-end';
          this.#verifyChunk();
        }
        continue;
      }
      if (this.#state === 'done') throw new ChunkedError('InvalidRequest', 'aws-chunked body continues after its final chunk');
      const nl = input.indexOf(0x0a, at);
      const end = nl === -1 ? input.length : nl + 1;
      this.#line = Buffer.concat([this.#line, input.subarray(at, end)]);
      at = end;
      const limit = this.#state === 'trailer' ? MAX_TRAILER : MAX_LINE;
      if (this.#line.length > limit) throw new ChunkedError('InvalidRequest', `aws-chunked line longer than ${limit} bytes: not a chunk header`);
      if (nl === -1) continue;
      if (this.#line.length < 2 || this.#line[this.#line.length - 2] !== 0x0d) {
        throw new ChunkedError('InvalidRequest', 'aws-chunked line not ended by CRLF');
      }
      const line = this.#line.subarray(0, this.#line.length - 2).toString('latin1');
      this.#line = Buffer.alloc(0);
      this.#onLine(line);
    }
    return out;
  }

  /** The body ended: throws unless it was complete and every check passed. */
  end(): void {
    if (this.#state === 'trailer' && this.#line.length === 0 && this.#trailer === '' && !this.#checksum && !this.#signedTrailer()) {
      // The JS SDK ends a body without a checksum right after `0\r\n`.
      this.#state = 'done';
    }
    if (this.#state !== 'done') {
      throw new ChunkedError('IncompleteBody', `aws-chunked body ended early (${this.#decoded} of ${this.#o.decodedLength} bytes, no final chunk)`);
    }
  }

  #signedTrailer(): boolean {
    return this.#o.payload === STREAMING_SIGNED_TRAILER;
  }

  #onLine(line: string): void {
    if (this.#state === 'data-end') {
      if (line !== '') throw new ChunkedError('InvalidRequest', 'aws-chunked chunk data longer than its declared size');
      this.#state = 'size';
      return;
    }
    if (this.#state === 'trailer') return this.#onTrailerLine(line);
    this.#onSizeLine(line);
  }

  #onSizeLine(line: string): void {
    const m = this.#signed ? /^([0-9a-fA-F]{1,16});chunk-signature=([0-9a-f]{64})$/.exec(line) : /^([0-9a-fA-F]{1,16})$/.exec(line);
    if (!m) {
      const want = this.#signed ? '<hex size>;chunk-signature=<64 hex digits>' : '<hex size>';
      throw new ChunkedError('InvalidRequest', `aws-chunked chunk header is not ${want}`);
    }
    const size = Number.parseInt(m[1]!, 16);
    if (!Number.isSafeInteger(size) || this.#decoded + size > this.#o.decodedLength) {
      throw new ChunkedError('InvalidRequest', `aws-chunked chunks exceed x-amz-decoded-content-length ${this.#o.decodedLength}`);
    }
    this.#chunkSig = m[2] ?? '';
    this.#remaining = size;
    if (size > 0) {
      this.#state = 'data';
      return;
    }
    this.#verifyChunk();
    if (this.#decoded !== this.#o.decodedLength) {
      throw new ChunkedError('IncompleteBody', `aws-chunked body has ${this.#decoded} bytes, x-amz-decoded-content-length says ${this.#o.decodedLength}`);
    }
    // The signed variant without a trailer ends with one empty line; the others with trailer lines and one.
    this.#state = 'trailer';
  }

  #onTrailerLine(line: string): void {
    if (line !== '') {
      this.#trailer += `${line}\n`;
      return;
    }
    const fields = new Map<string, string>();
    let signature: string | undefined;
    for (const l of this.#trailer.split('\n').filter((x) => x !== '')) {
      const i = l.indexOf(':');
      if (i <= 0) throw new ChunkedError('InvalidRequest', 'aws-chunked trailer line is not name:value');
      const name = l.slice(0, i).trim().toLowerCase();
      const value = l.slice(i + 1).trim();
      if (name === 'x-amz-trailer-signature') signature = value;
      else fields.set(name, value);
    }
    if (this.#signedTrailer()) this.#verifyTrailerSignature(fields, signature);
    else if (signature !== undefined) throw new ChunkedError('InvalidRequest', 'x-amz-trailer-signature in an unsigned aws-chunked body');
    this.#checkChecksum(fields);
    this.#state = 'done';
  }

  #checkChecksum(fields: Map<string, string>): void {
    const name = this.#o.trailer;
    for (const k of fields.keys()) {
      if (k !== name) throw new ChunkedError('InvalidRequest', `aws-chunked trailer ${k} was not announced in x-amz-trailer`);
    }
    if (!name || !this.#checksum) return;
    const got = fields.get(name);
    if (got === undefined) throw new ChunkedError('InvalidRequest', `aws-chunked trailer lacks the ${name} that x-amz-trailer announced`);
    const want = this.#checksum.digest().toString('base64');
    if (got !== want) {
      throw new ChunkedError('BadDigest', `the ${name.slice('x-amz-checksum-'.length).toUpperCase()} you specified did not match the calculated checksum`);
    }
  }

  #hmac(text: string): string {
    return createHmac('sha256', this.#o.signing!.key).update(text, 'utf8').digest('hex');
  }

  /** Each chunk's signature chains from the previous one (the first from the request's). */
  #verifyChunk(): void {
    if (!this.#signed) return;
    const s = this.#o.signing!;
    const hash = this.#chunkHash.digest('hex');
    this.#chunkHash = createHash('sha256');
    const text = ['AWS4-HMAC-SHA256-PAYLOAD', s.amzDate, s.scope, this.#previous, EMPTY_SHA256, hash].join('\n');
    this.#expectSignature(this.#hmac(text), this.#chunkSig, 'chunk');
    this.#previous = this.#chunkSig;
  }

  #verifyTrailerSignature(fields: Map<string, string>, signature: string | undefined): void {
    if (signature === undefined || !/^[0-9a-f]{64}$/.test(signature)) {
      throw new ChunkedError('InvalidRequest', 'aws-chunked trailer lacks x-amz-trailer-signature');
    }
    const s = this.#o.signing!;
    const canonical = [...fields].map(([k, v]) => `${k}:${v}\n`).join('');
    const hash = createHash('sha256').update(canonical, 'utf8').digest('hex');
    const text = ['AWS4-HMAC-SHA256-TRAILER', s.amzDate, s.scope, this.#previous, hash].join('\n');
    this.#expectSignature(this.#hmac(text), signature, 'trailer');
  }

  #expectSignature(want: string, got: string, what: string): void {
    const a = Buffer.from(want, 'hex');
    const b = Buffer.from(got, 'hex');
    if (a.length !== b.length || !timingSafeEqual(a, b)) {
      throw new ChunkedError('SignatureDoesNotMatch', `the ${what} signature of the aws-chunked body does not match`);
    }
  }
}
