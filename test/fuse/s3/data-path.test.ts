// The data path against a scripted HTTP server: what it signs (session tokens, refreshed
// credentials, the key's path on a path-style or virtual-host URL), what it retries and how a
// retried GET resumes, and which error kinds answers become. The contract suite covers the rest
// against real servers.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { DataPath } from '../../../fuse/s3/data-path.ts';
import { SlabPool } from '../../../fuse/s3/slab-pool.ts';
import { parseAuthorization, verify } from '../../../lib/sigv4.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';

afterAll(runTeardowns);

type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;

async function server(handler: Handler): Promise<number> {
  const s = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handler(req, res, Buffer.concat(chunks)));
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  onTeardown(
    () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  );
  return (s.address() as AddressInfo).port;
}

function dataPath(port: number, path: string, credentials: () => Promise<{ accessKeyId: string; secretAccessKey: string; sessionToken?: string }>) {
  const d = new DataPath({
    bucketUrl: new URL(`http://127.0.0.1:${port}${path}`),
    region: 'eu-west-1',
    credentials,
    maxAttempts: 3,
    idleTimeoutMs: 5000,
    maxSockets: 4,
    slabs: new SlabPool(),
  });
  onTeardown(() => d.close());
  return d;
}

const xmlError = (code: string) => `<?xml version="1.0"?><Error><Code>${code}</Code><Message>m</Message></Error>`;

describe('data path', () => {
  it('signs with the session token and the credentials the provider gives at each request', async () => {
    const seen: { url: string; host: string; token: string | undefined; ok: boolean }[] = [];
    let secret = 'first-secret';
    const port = await server((req, res, body) => {
      const headers = req.headers as Record<string, string>;
      const auth = parseAuthorization(headers.authorization)!;
      const [path, query = ''] = (req.url ?? '').split('?');
      const check = verify({ method: req.method!, path: path!, query, headers }, auth, secret, Date.now(), 60_000);
      seen.push({ url: req.url!, host: headers.host!, token: headers['x-amz-security-token'], ok: check.ok });
      res.writeHead(200, { etag: '"e1"', 'content-length': body.length ? 0 : 3 }).end(body.length ? '' : 'abc');
    });
    let calls = 0;
    const d = dataPath(port, '/bkt', async () => {
      calls++;
      return { accessKeyId: 'AK', secretAccessKey: secret, sessionToken: `token-${calls}` };
    });
    await d.put('dir/a b+c', Buffer.from('x'), { metadata: { mode: '33188' } });
    secret = 'refreshed-secret';
    expect((await d.getBuffer('k')).body.toString()).toBe('abc');
    await d.uploadPart('k', 'up/id=1', 2, Buffer.from('y'));
    expect(seen).toEqual([
      { url: '/bkt/dir/a%20b%2Bc', host: `127.0.0.1:${port}`, token: 'token-1', ok: true },
      { url: '/bkt/k', host: `127.0.0.1:${port}`, token: 'token-2', ok: true },
      { url: '/bkt/k?partNumber=2&uploadId=up%2Fid%3D1', host: `127.0.0.1:${port}`, token: 'token-3', ok: true },
    ]);
    // A virtual-host URL carries the bucket in its host name: the key is the whole path.
    const vhost = dataPath(port, '', async () => ({ accessKeyId: 'AK', secretAccessKey: secret }));
    await vhost.getBuffer('k');
    expect(seen.at(-1)).toMatchObject({ url: '/k', token: undefined, ok: true });
  });

  it('retries 500 and a body cut short, asking only for the bytes it lacks', async () => {
    const body = Buffer.from('0123456789abcdefghij');
    const ranges: string[] = [];
    let n = 0;
    const port = await server((req, res) => {
      ranges.push(req.headers.range!);
      n++;
      const [, a, b] = /bytes=(\d+)-(\d+)/.exec(req.headers.range!)!.map(Number);
      const part = body.subarray(a, b! + 1);
      if (n === 1) return void res.writeHead(500, { 'content-type': 'application/xml' }).end(xmlError('InternalError'));
      res.writeHead(206, { 'content-length': part.length, 'content-range': `bytes ${a}-${b}/${body.length}`, etag: '"v1"' });
      // The second answer stops after 5 bytes and the connection drops.
      if (n === 2) {
        res.write(part.subarray(0, 5));
        setTimeout(() => res.socket?.destroy(), 50);
        return;
      }
      res.end(part);
    });
    const d = dataPath(port, '/bkt', async () => ({ accessKeyId: 'AK', secretAccessKey: 'S' }));
    const pieces: Buffer[] = [];
    const got = await d.getPieces('k', { start: 2, end: 18, ifMatch: 'v1' }, (p) => pieces.push(Buffer.from(p)));
    expect(got).toBe(16);
    expect(Buffer.concat(pieces).toString()).toBe('23456789abcdefgh');
    expect(ranges).toEqual(['bytes=2-17', 'bytes=2-17', 'bytes=7-17']);
  });

  it('ends a GET whose whole-object answer was cut after the range, without asking again', async () => {
    // A server that ignores Range sends the whole object; the connection drops after the bytes
    // asked for. They all arrived: a retry would ask for an empty, invalid range.
    const body = Buffer.from('0123456789abcdefghij');
    const ranges: string[] = [];
    const port = await server((req, res) => {
      ranges.push(req.headers.range!);
      res.writeHead(200, { 'content-length': body.length, etag: '"v1"' });
      res.write(body.subarray(0, 12));
      setTimeout(() => res.socket?.destroy(), 50);
    });
    const d = dataPath(port, '/bkt', async () => ({ accessKeyId: 'AK', secretAccessKey: 'S' }));
    const pieces: Buffer[] = [];
    const got = await d.getPieces('k', { start: 2, end: 8, ifMatch: 'v1' }, (p) => pieces.push(Buffer.from(p)));
    expect(got).toBe(6);
    expect(Buffer.concat(pieces).toString()).toBe('234567');
    expect(ranges).toEqual(['bytes=2-7']);
  });

  it('names the error kinds the filesystem turns into errnos, and does not retry them', async () => {
    let requests = 0;
    const port = await server((req, res) => {
      requests++;
      const code = { '/bkt/missing': [404, 'NoSuchKey'], '/bkt/secret': [403, 'AccessDenied'] }[req.url!] ?? [
        412,
        'PreconditionFailed',
      ];
      res.writeHead(code[0] as number, { 'content-type': 'application/xml' }).end(xmlError(code[1] as string));
    });
    const d = dataPath(port, '/bkt', async () => ({ accessKeyId: 'AK', secretAccessKey: 'S' }));
    const kind = (p: Promise<unknown>) => p.then(() => 'none', (e: { kind?: string }) => e.kind);
    expect(await kind(d.getBuffer('missing'))).toBe('not-found');
    expect(await kind(d.put('secret', Buffer.from('x')))).toBe('access-denied');
    expect(await kind(d.getBuffer('old', { start: 0, end: 5, ifMatch: 'v0' }))).toBe('changed');
    expect(requests).toBe(3);
  });

  it('refuses the body of an answer for another version when the server ignored If-Match', async () => {
    const port = await server((_req, res) => {
      res.writeHead(206, { 'content-length': 3, 'content-range': 'bytes 0-2/3', etag: '"v2"' }).end('new');
    });
    const d = dataPath(port, '/bkt', async () => ({ accessKeyId: 'AK', secretAccessKey: 'S' }));
    const err = await d.getPieces('k', { start: 0, end: 3, ifMatch: 'v1' }, () => {}).catch((e: unknown) => e);
    expect((err as { kind?: string }).kind).toBe('changed');
  });
});
