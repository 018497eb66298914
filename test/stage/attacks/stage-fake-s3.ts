// A hostile S3 store for attacking `estuary stage`: node:http on a random loopback port that
// answers path-style ListObjectsV2, HEAD, GET (with Range) and PUT/multipart from a map of
// objects, with a hook that can take over any request (to lie, stall, or change an object).

import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTeardown } from '../../helpers/cleanup.ts';

export interface FakeObject {
  body: Buffer;
  /** As sent in ETag headers and listings (quoted MD5 by default). */
  etag?: string;
  /** x-amz-meta-sha256; true means the real SHA-256 of body. */
  sha256?: string | true;
  /** The size the listing claims (default: body length). */
  listSize?: number;
}

export interface Req {
  method: string;
  url: URL;
  key: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** Return true when the request was answered. */
export type Hook = (req: Req, res: ServerResponse) => boolean | Promise<boolean>;

export interface FakeS3 {
  endpoint: string;
  objects: Map<string, FakeObject>;
  requests: Req[];
  hook: Hook | undefined;
  close(): Promise<void>;
}

export const md5 = (b: Buffer | string) => createHash('md5').update(b).digest('hex');
export const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

const xmlEscape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`).replace(/[\x00-\x08\x0b\x0c\x0e-\x1f]/g, (c) => `&#${c.charCodeAt(0)};`);

export function etagOf(o: FakeObject): string {
  return o.etag ?? `"${md5(o.body)}"`;
}

/** A ListObjectsV2 page. */
export function listXml(entries: { key: string; size: number; etag: string }[], next?: string): string {
  const contents = entries
    .map((e) => `<Contents><Key>${xmlEscape(e.key)}</Key><LastModified>2024-01-01T00:00:00.000Z</LastModified><ETag>${xmlEscape(e.etag)}</ETag><Size>${e.size}</Size><StorageClass>STANDARD</StorageClass></Contents>`)
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix></Prefix><KeyCount>${entries.length}</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>${next ? 'true' : 'false'}</IsTruncated>${next ? `<NextContinuationToken>${xmlEscape(next)}</NextContinuationToken>` : ''}${contents}</ListBucketResult>`;
}

function objectHeaders(o: FakeObject): Record<string, string> {
  const h: Record<string, string> = { etag: etagOf(o), 'last-modified': 'Mon, 01 Jan 2024 00:00:00 GMT', 'content-type': 'application/octet-stream', 'accept-ranges': 'bytes' };
  if (o.sha256 !== undefined) h['x-amz-meta-sha256'] = o.sha256 === true ? sha256(o.body) : o.sha256;
  return h;
}

/** Answers a GET of `o` honouring Range (bytes=N-), as a correct store would. */
export function serveObject(req: Req, res: ServerResponse, o: FakeObject): void {
  const h = objectHeaders(o);
  const ifMatch = req.headers['if-match'];
  if (ifMatch !== undefined && ifMatch !== h.etag) {
    res.writeHead(412, { 'content-type': 'application/xml' }).end('<Error><Code>PreconditionFailed</Code></Error>');
    return;
  }
  const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
  if (m) {
    const start = Number(m[1]);
    const end = m[2] ? Number(m[2]) : o.body.length - 1;
    const part = o.body.subarray(start, end + 1);
    res.writeHead(206, { ...h, 'content-length': String(part.length), 'content-range': `bytes ${start}-${start + part.length - 1}/${o.body.length}` });
    if (req.method === 'HEAD') res.end();
    else res.end(part);
    return;
  }
  res.writeHead(200, { ...h, 'content-length': String(o.body.length) });
  if (req.method === 'HEAD') res.end();
  else res.end(o.body);
}

export async function startFakeS3(objects: Map<string, FakeObject> = new Map(), bucket = 'bkt'): Promise<FakeS3> {
  const requests: Req[] = [];
  const uploads = new Map<string, Map<number, Buffer>>();
  let uploadSeq = 0;
  const fake: FakeS3 = { endpoint: '', objects, requests, hook: undefined, close: async () => undefined };
  const server = createServer(async (inc, res) => {
    const chunks: Buffer[] = [];
    for await (const c of inc) chunks.push(c as Buffer);
    const url = new URL(inc.url ?? '/', 'http://x');
    // The raw path: URL would resolve dot segments (`p/e/./g`), which a store keeps as they are.
    const path = (inc.url ?? '/').split('?')[0]!.split('/').map((s) => decodeURIComponent(s));
    const key = path[1] === bucket ? path.slice(2).join('/') : '';
    const req: Req = { method: inc.method ?? 'GET', url, key, headers: inc.headers, body: Buffer.concat(chunks) };
    requests.push(req);
    try {
      if (fake.hook && (await fake.hook(req, res))) return;
      defaultAnswer(req, res);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    }
  });
  const defaultAnswer = (req: Req, res: ServerResponse) => {
    const q = req.url.searchParams;
    if (req.method === 'GET' && q.get('list-type') === '2') {
      const prefix = q.get('prefix') ?? '';
      const entries = [...objects.entries()]
        .filter(([k]) => k.startsWith(prefix))
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, o]) => ({ key: k, size: o.listSize ?? o.body.length, etag: etagOf(o) }));
      res.writeHead(200, { 'content-type': 'application/xml' }).end(listXml(entries));
      return;
    }
    if (req.method === 'POST' && q.has('uploads')) {
      const id = `up${++uploadSeq}`;
      uploads.set(id, new Map());
      res.writeHead(200, { 'content-type': 'application/xml' }).end(`<InitiateMultipartUploadResult><Bucket>${bucket}</Bucket><Key>${xmlEscape(req.key)}</Key><UploadId>${id}</UploadId></InitiateMultipartUploadResult>`);
      uploads.get(id)!.set(0, Buffer.from(String(req.headers['x-amz-meta-sha256'] ?? '')));
      return;
    }
    if (req.method === 'PUT' && q.has('uploadId')) {
      const parts = uploads.get(q.get('uploadId')!);
      if (!parts) return void res.writeHead(404).end('<Error><Code>NoSuchUpload</Code></Error>');
      parts.set(Number(q.get('partNumber')), req.body);
      res.writeHead(200, { etag: `"${md5(req.body)}"` }).end();
      return;
    }
    if (req.method === 'POST' && q.has('uploadId')) {
      const parts = uploads.get(q.get('uploadId')!);
      if (!parts) return void res.writeHead(404).end('<Error><Code>NoSuchUpload</Code></Error>');
      const nums = [...parts.keys()].filter((n) => n > 0).sort((a, b) => a - b);
      const body = Buffer.concat(nums.map((n) => parts.get(n)!));
      objects.set(req.key, { body, etag: `"${md5(body)}-${nums.length}"`, sha256: parts.get(0)!.toString() || undefined });
      uploads.delete(q.get('uploadId')!);
      res.writeHead(200, { 'content-type': 'application/xml' }).end(`<CompleteMultipartUploadResult><Key>${xmlEscape(req.key)}</Key><ETag>"${md5(body)}-${nums.length}"</ETag></CompleteMultipartUploadResult>`);
      return;
    }
    if (req.method === 'DELETE' && q.has('uploadId')) {
      uploads.delete(q.get('uploadId')!);
      res.writeHead(204).end();
      return;
    }
    if (req.method === 'PUT') {
      const sha = req.headers['x-amz-meta-sha256'];
      objects.set(req.key, { body: req.body, sha256: typeof sha === 'string' ? sha : undefined });
      res.writeHead(200, { etag: `"${md5(req.body)}"` }).end();
      return;
    }
    if (req.method === 'GET' || req.method === 'HEAD') {
      const o = objects.get(req.key);
      if (!o) return void res.writeHead(404, { 'content-type': 'application/xml' }).end(req.method === 'HEAD' ? undefined : '<Error><Code>NoSuchKey</Code></Error>');
      serveObject(req, res, o);
      return;
    }
    res.writeHead(400).end();
  };
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  fake.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  onTeardown(() => fake.close());
  return fake;
}
