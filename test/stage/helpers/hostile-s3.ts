// A small S3 server that misbehaves on purpose, for testing what `estuary stage` does against a
// broken or hostile store: listings with keys no directory can hold (colliding, `..`, symlink
// crossing), ETags and lengths that lie, bodies that stall or are cut short, listings that never
// end or never answer. It speaks just enough of the protocol for the AWS SDK (ListObjectsV2,
// HEAD and GET with Range) and accepts any signature. Loopback, random port, stopped in teardown.

import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { onTeardown } from '../../helpers/cleanup.ts';

export interface HostileObject {
  readonly key: string;
  readonly body: Buffer;
  /** The ETag sent (default: the body's MD5, quoted). */
  readonly etag?: string;
  /** x-amz-meta-sha256 sent, when set. */
  readonly sha256?: string;
  /** Content-Length announced instead of the body's (the connection is closed after the body). */
  readonly contentLength?: number;
  /** Sends this many bytes of the body, then nothing more (the connection stays open). */
  readonly stallAfter?: number;
  /** Sends this many bytes, then closes the connection. */
  readonly truncateAt?: number;
  /** A GET waits this long before it answers (a window for a test to change the destination). */
  readonly delayMs?: number;
  /** How many GETs misbehave (stall or truncate); later ones are answered properly. Default: all. */
  readonly misbehave?: number;
}

export interface HostileOptions {
  readonly bucket: string;
  readonly objects?: readonly HostileObject[];
  /** Keys per listing page. */
  readonly pageSize?: number;
  /** A listing that never ends: every page says there is another, with fresh keys `PREFIXendless/NNNNNNNN` (bodies of `endlessSize` bytes). */
  readonly endless?: { readonly prefix: string; readonly keyPrefix?: string; readonly size?: number; readonly stallBodies?: boolean };
  /** Listings are accepted and never answered. */
  readonly stallListing?: boolean;
}

export interface HostileS3 {
  readonly endpoint: string;
  /** Requests seen, by kind. */
  readonly seen: { list: number; head: number; get: number };
  stop(): Promise<void>;
}

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export async function startHostileS3(o: HostileOptions): Promise<HostileS3> {
  const objects = [...(o.objects ?? [])].sort((a, b) => (Buffer.compare(Buffer.from(a.key), Buffer.from(b.key))));
  const byKey = new Map(objects.map((x) => [x.key, x]));
  const gets = new Map<string, number>();
  const seen = { list: 0, head: 0, get: 0 };
  const sockets = new Set<Socket>();
  const pageSize = o.pageSize ?? 1000;

  const endlessObject = (key: string): HostileObject | undefined => {
    const e = o.endless;
    if (!e || !key.startsWith(`${e.prefix}${e.keyPrefix ?? 'endless/'}`)) return undefined;
    const body = Buffer.alloc(e.size ?? 1, 120);
    return { key, body, stallAfter: e.stallBodies ? 0 : undefined };
  };

  const list = (url: URL, res: ServerResponse) => {
    seen.list++;
    if (o.stallListing) return; // never answered
    const prefix = url.searchParams.get('prefix') ?? '';
    const token = Number(url.searchParams.get('continuation-token') ?? '0');
    let keys: { key: string; size: number; etag: string }[];
    let more: boolean;
    if (o.endless) {
      keys = Array.from({ length: pageSize }, (_, i) => {
        const key = `${o.endless!.prefix}${o.endless!.keyPrefix ?? 'endless/'}${String(token * pageSize + i).padStart(9, '0')}`;
        return { key, size: o.endless!.size ?? 1, etag: `"${md5(Buffer.alloc(o.endless!.size ?? 1, 120))}"` };
      });
      more = true;
    } else {
      const all = objects.filter((x) => x.key.startsWith(prefix));
      keys = all.slice(token * pageSize, (token + 1) * pageSize).map((x) => ({ key: x.key, size: x.contentLength ?? x.body.length, etag: x.etag ?? `"${md5(x.body)}"` }));
      more = (token + 1) * pageSize < all.length;
    }
    const contents = keys.map((k) => `<Contents><Key>${xml(k.key)}</Key><Size>${k.size}</Size><ETag>${xml(k.etag)}</ETag><LastModified>2026-01-01T00:00:00.000Z</LastModified><StorageClass>STANDARD</StorageClass></Contents>`);
    res.writeHead(200, { 'content-type': 'application/xml' });
    res.end(
      `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${o.bucket}</Name><Prefix>${xml(prefix)}</Prefix><KeyCount>${keys.length}</KeyCount><MaxKeys>${pageSize}</MaxKeys><IsTruncated>${more}</IsTruncated>${more ? `<NextContinuationToken>${token + 1}</NextContinuationToken>` : ''}${contents.join('')}</ListBucketResult>`,
    );
  };

  const object = (req: IncomingMessage, key: string, res: ServerResponse) => {
    const x = byKey.get(key) ?? endlessObject(key);
    if (!x) {
      res.writeHead(404, { 'content-type': 'application/xml' });
      res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>no such key</Message></Error>');
      return;
    }
    const headers: Record<string, string> = { etag: x.etag ?? `"${md5(x.body)}"`, 'last-modified': 'Thu, 01 Jan 2026 00:00:00 GMT', 'accept-ranges': 'bytes' };
    if (x.sha256) headers['x-amz-meta-sha256'] = x.sha256;
    if (req.method === 'HEAD') {
      seen.head++;
      res.writeHead(200, { ...headers, 'content-length': String(x.contentLength ?? x.body.length) });
      return res.end();
    }
    seen.get++;
    if (x.delayMs) {
      const { delayMs, ...now } = x;
      setTimeout(() => answer(req, key, now, res), delayMs);
      return;
    }
    answer(req, key, x, res);
  };

  const answer = (req: IncomingMessage, key: string, x: HostileObject, res: ServerResponse) => {
    const headers: Record<string, string> = { etag: x.etag ?? `"${md5(x.body)}"`, 'last-modified': 'Thu, 01 Jan 2026 00:00:00 GMT', 'accept-ranges': 'bytes' };
    if (x.sha256) headers['x-amz-meta-sha256'] = x.sha256;
    const n = (gets.get(key) ?? 0) + 1;
    gets.set(key, n);
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const from = range ? Number(range[1]) : 0;
    const body = x.body.subarray(from);
    const length = (x.contentLength ?? x.body.length) - from;
    if (range) headers['content-range'] = `bytes ${from}-${from + length - 1}/${x.contentLength ?? x.body.length}`;
    res.writeHead(range ? 206 : 200, { ...headers, 'content-length': String(length) });
    const bad = x.misbehave === undefined || n <= x.misbehave;
    if (bad && x.stallAfter !== undefined) return void res.write(body.subarray(0, Math.max(0, x.stallAfter - from)));
    if (bad && x.truncateAt !== undefined) {
      res.write(body.subarray(0, Math.max(0, x.truncateAt - from)), () => res.socket?.destroy());
      return;
    }
    if (x.contentLength !== undefined && x.contentLength !== x.body.length) {
      res.write(body, () => res.socket?.destroy());
      return;
    }
    res.end(body);
  };

  const server = createServer((req, res) => {
    req.resume();
    const url = new URL(req.url ?? '/', 'http://localhost');
    // The raw path, not url.pathname: WHATWG URLs resolve `.` and `..` segments, which are keys here.
    const [, bucket, ...rest] = (req.url ?? '/').split('?')[0]!.split('/');
    if (bucket !== o.bucket) {
      res.writeHead(404, { 'content-type': 'application/xml' });
      return res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchBucket</Code><Message>no such bucket</Message></Error>');
    }
    if (rest.length === 0 || (rest.length === 1 && rest[0] === '')) return list(url, res);
    object(req, rest.map((s) => decodeURIComponent(s)).join('/'), res);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const stop = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  onTeardown(stop);
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, stop };
}
