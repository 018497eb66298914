// An aws-chunked upload (PutObject, UploadPart) handed to the store as a plain body: decoded and
// checked as it streams through (aws-chunked.ts), sent with the decoded Content-Length and the
// gateway's own signature. The last bytes are held back until the body has passed every check, so
// a body with a bad chunk signature, a wrong trailer checksum or a short read reaches the store
// short of its Content-Length and is never stored; the client gets the S3 error of the check.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { Logger } from '../../lib/log.ts';
import type { Target } from '../proxy/target.ts';
import { classifyError, dropBody, type Upstreams } from '../upstream.ts';
import { AwsChunkedDecoder, ChunkedError, type ChunkedOptions } from './aws-chunked.ts';
import type { S3ErrorCode } from './errors.ts';

/** Headers of the framing, which describe the body the client sent, not the one the store gets. */
const FRAMING = [
  'content-length',
  'transfer-encoding',
  'x-amz-decoded-content-length',
  'x-amz-trailer',
  'x-amz-sdk-checksum-algorithm',
];

export interface ChunkedUploadDeps {
  readonly upstreams: Upstreams;
  readonly log: Logger;
  /** Drops what the cache holds for the key once the store has acknowledged the write. */
  /** Resolves once no worker serves the replaced object: the answer waits for it. */
  readonly invalidate: () => Promise<void>;
}

/** The decoder's options from the request headers (signing comes from the authenticated request). */
export function chunkedOptions(req: IncomingMessage, signing: ChunkedOptions['signing']): ChunkedOptions {
  const h = req.headers;
  const decoded = h['x-amz-decoded-content-length'];
  const trailer = h['x-amz-trailer'];
  return {
    payload: String(h['x-amz-content-sha256']),
    decodedLength: typeof decoded === 'string' && /^\d+$/.test(decoded) ? Number(decoded) : Number.NaN,
    trailer: typeof trailer === 'string' ? trailer.trim().toLowerCase() : undefined,
    signing,
  };
}

/** Request headers for the store: the framing's own removed, aws-chunked taken off Content-Encoding. */
export function plainHeaders(req: IncomingMessage, decodedLength: number): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !FRAMING.includes(k)) out[k] = v;
  const encodings = String(req.headers['content-encoding'] ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '' && e.toLowerCase() !== 'aws-chunked');
  if (encodings.length > 0) out['content-encoding'] = encodings.join(',');
  else delete out['content-encoding'];
  out['content-length'] = String(decodedLength);
  return out;
}

/** The decoded body, holding back its last piece until the decoder has seen a complete, valid body. */
async function* decodedBody(req: IncomingMessage, decoder: AwsChunkedDecoder, failed: { error?: ChunkedError }) {
  let held: Buffer | undefined;
  try {
    // When the store answers before the body ends, this generator is returned early: the client's
    // request must stay open (and be drained) so that answer can still reach it.
    for await (const chunk of req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      for (const piece of decoder.push(chunk)) {
        if (held) yield held;
        held = piece;
      }
    }
    decoder.end();
  } catch (err) {
    failed.error = err instanceof ChunkedError ? err : new ChunkedError('IncompleteBody', 'the upload was cut off before its end');
    throw failed.error;
  }
  if (held) yield held;
}

export async function chunkedUpload(
  req: IncomingMessage,
  res: ServerResponse,
  target: Target,
  options: ChunkedOptions,
  deps: ChunkedUploadDeps,
  deny: (code: S3ErrorCode, message: string) => void,
): Promise<void> {
  let decoder: AwsChunkedDecoder;
  try {
    decoder = new AwsChunkedDecoder(options);
  } catch (err) {
    const e = err as ChunkedError;
    return deny(e.s3Code, e.message);
  }
  const failed: { error?: ChunkedError } = {};
  const method = req.method ?? 'PUT';
  let up;
  try {
    up = await deps.upstreams.request(target.servers, {
      method,
      path: target.path,
      headers: target.sign!(method, plainHeaders(req, options.decodedLength)),
      body: Readable.from(decodedBody(req, decoder, failed), { objectMode: false }),
      label: target.label,
    });
  } catch (err) {
    if (failed.error) return deny(failed.error.s3Code, failed.error.message);
    deps.log.warn({ url: target.url, err: classifyError(err).message }, 'S3 store unreachable during an aws-chunked upload');
    return deny('ServiceUnavailable', 'the store is unreachable');
  }
  if (failed.error) {
    // The store answered before the body ended (it refused the upload, or the body failed a check
    // as the store finished reading it): the check's error is what the client must see.
    dropBody(up.body);
    return deny(failed.error.s3Code, failed.error.message);
  }
  const body = Buffer.from(await up.body.arrayBuffer());
  if (up.statusCode < 400) await deps.invalidate();
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(up.headers)) {
    if (v !== undefined && k !== 'connection' && k !== 'transfer-encoding' && k !== 'keep-alive') headers[k] = v;
  }
  req.resume();
  res.writeHead(up.statusCode, { ...headers, 'content-length': String(body.length) });
  res.end(body);
}
