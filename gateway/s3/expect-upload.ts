// An upload the client sent with `Expect: 100-continue` (the SDKs do for large bodies, botocore
// for every PutObject and UploadPart), passed on to the store the same way: the store's verdict
// comes before the body. A store that refuses the upload (403 for a key it will not take, 501 for
// a feature it lacks) answers at once, and the client gets that answer instead of a cut
// connection: once a store has answered and closed while a body is still arriving, the reset
// takes its answer with it. Only when the store says 100 Continue (or says nothing for a second,
// as old servers do; the SDKs wait as long) does the client get its 100 and the body flow.
//
// node:http rather than the gateway's undici pool: undici refuses to send Expect.

import { type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { Logger } from '../../lib/log.ts';
import type { Target } from '../proxy/target.ts';
import type { S3ErrorCode } from './errors.ts';

/** How long a store that says nothing to Expect gets before the body is sent anyway (curl and the SDKs wait 1 s). */
const CONTINUE_WAIT_MS = 1000;
/** Never forwarded: hop-by-hop, the client's own signature (the target signs), and Expect itself. */
const DROPPED = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'upgrade',
  'proxy-connection',
  'expect',
  'host',
]);

export interface ExpectUploadDeps {
  readonly log: Logger;
  /** Drops what the cache holds for the key once the store has acknowledged the write. */
  /** Resolves once no worker serves the replaced object: the answer waits for it. */
  readonly invalidate: () => Promise<void>;
}

/** Whether the client waits for 100 Continue before it sends the body. */
export function expectsContinue(req: IncomingMessage): boolean {
  return String(req.headers.expect ?? '').toLowerCase() === '100-continue';
}

export function expectUpload(
  req: IncomingMessage,
  res: ServerResponse,
  target: Target,
  deps: ExpectUploadDeps,
  deny: (code: S3ErrorCode, message: string) => void,
): Promise<void> {
  const method = req.method ?? 'PUT';
  const origin = new URL(target.servers[0]!);
  const base: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !DROPPED.has(k)) base[k] = v;
  const headers = { ...target.sign!(method, base), expect: '100-continue' };
  return new Promise((resolve) => {
    let sending = false;
    const send = () => {
      if (sending) return;
      sending = true;
      clearTimeout(timer);
      res.writeContinue();
      req.pipe(up);
    };
    const up = request({ host: origin.hostname, port: origin.port, method, path: target.path, headers }, (answer) => {
      clearTimeout(timer);
      // The answer goes out once no worker serves the replaced object any more.
      const dropped = (answer.statusCode ?? 500) < 400 ? deps.invalidate() : Promise.resolve();
      void dropped.then(() => relayAnswer(answer));
    });
    const relayAnswer = (answer: IncomingMessage) => {
      const out: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && !DROPPED.has(k)) out[k] = v;
      // A refusal before the body: the client sent none, and the connection cannot carry another request.
      if (!sending) out.connection = 'close';
      res.writeHead(answer.statusCode ?? 502, out);
      answer.pipe(res);
      answer.on('end', () => resolve());
      answer.on('error', () => {
        res.destroy();
        resolve();
      });
    };
    const timer = setTimeout(send, CONTINUE_WAIT_MS);
    up.on('continue', send);
    up.on('error', (err) => {
      clearTimeout(timer);
      deps.log.warn({ url: target.url, err: err.message }, 'S3 store unreachable during an upload');
      if (res.headersSent) res.destroy();
      else deny('ServiceUnavailable', 'the store is unreachable');
      resolve();
    });
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    up.flushHeaders();
  });
}
