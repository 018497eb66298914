// One plain request to --endpoint before the bucket is checked, with a deadline of its own.
// The bucket check goes through the S3 client, which waits --request-timeout (60 s) per attempt
// and retries --retries times: a port that accepts and never answers kept the mount silent for
// six minutes, and a web server answering 200 to everything passed for an empty bucket. This asks
// once, unsigned, and records what came back (or did not) for endpoint-diagnosis.ts to judge.

import type { IncomingMessage } from 'node:http';
import { connect as tlsConnect } from 'node:tls';
import type { EndpointAnswer, EndpointFacts } from './endpoint-diagnosis.ts';

// Not `import ... from 'node:http'`: an ES module import of node:http reads every export, and its
// WebSocket one loads Node's bundled undici, 14 MB of resident memory for the mount's whole life.
const { request: httpRequest } = process.getBuiltinModule('node:http');
const { request: httpsRequest } = process.getBuiltinModule('node:https');

/**
 * How long the probe waits for the whole answer. A live S3 server answers an unsigned request
 * (a refusal, usually) without doing any work, in milliseconds on a LAN and well under a second
 * across continents; 5 s leaves room for a loaded host and still names a silent port at once.
 */
export const ENDPOINT_PROBE_MS = 5000;
/** What the probe reads of a body: enough to see HTML, XML or Go's "HTTPS server" sentence. */
const BODY_BYTES = 2048;

/** GET /BUCKET?location, path-style under the endpoint's own path: S3 answers it in XML. */
export function probeUrl(endpoint: string, bucket: string): URL {
  const url = new URL(endpoint);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${encodeURIComponent(bucket)}`;
  url.search = '?location';
  return url;
}

/** The body read so far. */
interface Body {
  readonly chunks: Buffer[];
  size: number;
}

function readSome(res: IncomingMessage, body: Body): Promise<void> {
  return new Promise((done) => {
    const finish = () => {
      res.destroy();
      done();
    };
    res.on('data', (chunk: Buffer) => {
      body.chunks.push(chunk);
      body.size += chunk.length;
      if (body.size >= BODY_BYTES) finish();
    });
    res.on('end', finish);
    res.on('error', finish);
  });
}

const text = (body: Body) => Buffer.concat(body.chunks).subarray(0, BODY_BYTES).toString('utf8');

/** A Location header as an absolute address, or as given when it is not a URL at all. */
function resolved(location: string | undefined, base: URL): string {
  if (!location) return '';
  try {
    return new URL(location, base).href;
  } catch {
    return location;
  }
}

function ask(url: URL, deadlineMs: number): Promise<EndpointAnswer> {
  return new Promise((done) => {
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    let connected = false;
    let head: { status: number; contentType: string; location: string } | undefined;
    const body: Body = { chunks: [], size: 0 };
    const req = request(url, { method: 'GET', agent: false, headers: { accept: 'application/xml' } }, (res) => {
      const got = {
        status: res.statusCode ?? 0,
        contentType: String(res.headers['content-type'] ?? ''),
        location: resolved(res.headers.location, url),
      };
      head = got;
      void readSome(res, body).then(() => {
        clearTimeout(timer);
        done({ kind: 'answer', ...got, body: text(body) });
      });
    });
    // The deadline covers the body too: a status line followed by a trickle is not an answer to
    // judge, but it is not silence either, and the refusal says what came.
    const timer = setTimeout(() => {
      done(
        head
          ? { kind: 'partial', status: head.status, contentType: head.contentType, bytes: body.size }
          : { kind: 'timeout', connected },
      );
      req.destroy();
    }, deadlineMs);
    req.on('socket', (socket) => {
      socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', () => (connected = true));
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      done({ kind: 'error', code: err.code ?? '', message: err.message });
    });
    req.end();
  });
}

/** Whether host:port completes a TLS handshake (any certificate): the port speaks TLS. */
function speaksTls(url: URL, deadlineMs: number): Promise<boolean> {
  return new Promise((done) => {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const socket = tlsConnect({
      host,
      port: Number(url.port || 80),
      servername: /^[\d.]+$|:/.test(host) ? undefined : host,
      rejectUnauthorized: false,
    });
    const finish = (yes: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      done(yes);
    };
    const timer = setTimeout(() => finish(false), deadlineMs);
    socket.once('secureConnect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

/** An http:// answer that may mean the port speaks TLS: a reset, or a plain 400 refusal. */
function mayBeTlsPort(answer: EndpointAnswer): boolean {
  if (answer.kind === 'error') return answer.code === 'ECONNRESET' || /socket hang up/i.test(answer.message);
  return answer.kind === 'answer' && answer.status === 400 && !/xml/i.test(answer.contentType);
}

export async function probeEndpoint(endpoint: string, bucket: string, deadlineMs = ENDPOINT_PROBE_MS): Promise<EndpointFacts> {
  const url = probeUrl(endpoint, bucket);
  const answer = await ask(url, deadlineMs);
  const tls = url.protocol === 'http:' && mayBeTlsPort(answer) ? await speaksTls(url, deadlineMs) : false;
  return { endpoint, deadlineMs, answer, speaksTls: tls };
}
