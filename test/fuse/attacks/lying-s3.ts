// A lying S3 server for attacks on the mount's own control client: plain HTTP on a random
// loopback port, every request answered by the test's handler (or never answered), every request
// recorded. No signature is checked: the lies are in the answers.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTeardown } from '../../helpers/cleanup.ts';
import { Filesystem } from '../../../fuse/fs/filesystem.ts';
import { S3ObjectClient } from '../../../fuse/s3/s3-client.ts';
import { tempDir } from '../../helpers/tmp.ts';

export interface SeenRequest {
  readonly method: string;
  readonly url: URL;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

export interface Answer {
  readonly status?: number;
  readonly headers?: Record<string, string>;
  readonly body?: string | Buffer;
}

/** An answer; 'hang' to accept the request and never answer it; 'drop' to close the connection unanswered. */
export type Handler = (req: SeenRequest) => Answer | 'hang' | 'drop';

export interface LyingServer {
  readonly endpoint: string;
  readonly requests: SeenRequest[];
  handler: Handler;
}

export async function startLyingServer(handler: Handler, host = '127.0.0.1'): Promise<LyingServer> {
  const hung = new Set<http.ServerResponse>();
  const server: LyingServer = { endpoint: '', requests: [], handler };
  const srv = http.createServer((req, res) => {
    const pieces: Buffer[] = [];
    req.on('data', (c: Buffer) => pieces.push(c));
    req.on('end', () => {
      const seen: SeenRequest = {
        method: req.method ?? '',
        url: new URL(req.url ?? '/', 'http://x'),
        headers: req.headers,
        body: Buffer.concat(pieces),
      };
      server.requests.push(seen);
      const answer = server.handler(seen);
      if (answer === 'drop') {
        req.socket.destroy();
        return;
      }
      if (answer === 'hang') {
        hung.add(res);
        return;
      }
      const body = answer.body ?? '';
      res.writeHead(answer.status ?? 200, {
        'content-type': 'application/xml',
        'content-length': String(Buffer.byteLength(body)),
        ...answer.headers,
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    });
  });
  await new Promise<void>((r) => srv.listen(0, host, r));
  const port = (srv.address() as AddressInfo).port;
  onTeardown(async () => {
    for (const r of hung) r.socket?.destroy();
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  });
  Object.assign(server, { endpoint: `http://${host.includes(':') ? `[${host}]` : host}:${port}` });
  return server;
}

/** The mount's client for `bucket` at the server, with keys given and short timeouts. */
export function clientFor(
  endpoint: string,
  options: { maxAttempts?: number; idleTimeoutMs?: number; env?: Record<string, string | undefined> } = {},
): S3ObjectClient {
  const client = new S3ObjectClient({
    bucket: 'bkt',
    endpoint,
    region: 'us-east-1',
    maxAttempts: options.maxAttempts ?? 3,
    idleTimeoutMs: options.idleTimeoutMs ?? 2000,
    maxSockets: 4,
    ...(options.env ? { env: options.env } : { credentials: { accessKeyId: 'AK', secretAccessKey: 'SK' } }),
  });
  onTeardown(() => client.destroy());
  return client;
}

/** What `p` settles to within `ms`, or 'still pending'. */
export async function within<T>(p: Promise<T>, ms: number): Promise<{ value: T } | { error: unknown } | 'still pending'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'still pending'>((r) => (timer = setTimeout(() => r('still pending'), ms)));
  try {
    return await Promise.race([p.then((value) => ({ value }), (error: unknown) => ({ error })), late]);
  } finally {
    clearTimeout(timer);
  }
}

export const xml = (body: string) => `<?xml version="1.0" encoding="UTF-8"?>\n${body}`;

/** The mount's filesystem layer (no FUSE) over the mount's client at `endpoint`, read-only, showing `prefix`. */
export async function filesystemAt(endpoint: string, prefix = ''): Promise<Filesystem> {
  return new Filesystem({
    client: clientFor(endpoint),
    prefix,
    readOnly: true,
    defaults: { uid: 0, gid: 0, fileMode: 0o644, dirMode: 0o755 },
    cacheTtlMs: 1000,
    memoryLimit: 64 * 2 ** 20,
    cacheDir: await tempDir('estuary-atk-mctl-'),
    stagingLimit: 2 ** 30,
    firstPartSize: 8 * 2 ** 20,
    maxInFlight: 2,
    maxReadahead: 8 * 2 ** 20,
    renameDirLimit: 1000,
    memoryWaitMs: 2000,
    log: { error() {}, warn() {}, debug() {} },
  });
}

/** A ListObjectsV2 page: keys and prefixes given as they go in the XML. */
export function listing(keys: readonly string[], prefixes: readonly string[] = [], extra = ''): string {
  const contents = keys
    .map((k) => `<Contents><Key>${k}</Key><Size>3</Size><ETag>"e"</ETag><LastModified>2020-01-01T00:00:00.000Z</LastModified></Contents>`)
    .join('');
  const common = prefixes.map((p) => `<CommonPrefixes><Prefix>${p}</Prefix></CommonPrefixes>`).join('');
  return xml(`<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>bkt</Name>${extra}${contents}${common}</ListBucketResult>`);
}
