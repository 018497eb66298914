// A minimal HTTP client for gateway tests: sends absolute-URI (proxy) or origin-form requests and
// reports whether the body arrived complete, which fetch() would hide behind an exception.

import { request } from 'node:http';

export interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
  /** False when the connection ended before the body did. */
  readonly complete: boolean;
}

export interface SendOptions {
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string | Buffer;
  /** Read this many bytes per ms at most (a slow client); 0 = as fast as possible. */
  readonly slowBytesPerMs?: number;
  /** Called once with the body's first bytes (a test kills the gateway mid-body from here). */
  readonly onFirstBytes?: () => void;
}

/** Sends `target` (absolute URL for proxying, or a path) to the gateway at `gateway`. */
export function send(gateway: string, target: string, options: SendOptions = {}): Promise<Reply> {
  const gw = new URL(gateway);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: gw.hostname,
        port: gw.port,
        method: options.method ?? 'GET',
        path: target,
        headers: options.headers,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let done = false;
        const finish = (complete: boolean) => {
          if (done) return;
          done = true;
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
            complete,
          });
        };
        res.on('data', (c: Buffer) => {
          if (chunks.length === 0) options.onFirstBytes?.();
          chunks.push(c);
          if (options.slowBytesPerMs) {
            res.pause();
            setTimeout(() => res.resume(), Math.ceil(c.length / options.slowBytesPerMs));
          }
        });
        res.on('end', () => finish(res.complete));
        res.on('aborted', () => finish(false));
        res.on('error', () => finish(false));
        res.on('close', () => finish(res.complete));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}
