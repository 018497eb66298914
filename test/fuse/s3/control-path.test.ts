// The control calls against a scripted S3 server on loopback: what goes on the wire (signature,
// query, Content-MD5, copy source, metadata) and how odd answers are taken (a HEAD's length with
// no body, an <Error> in a 200, a lost answer to CompleteMultipartUpload).

import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3ObjectClient } from '../../../fuse/s3/s3-client.ts';
import { parseAuthorization, verify } from '../../../lib/sigv4.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';

afterAll(runTeardowns);

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  signed: boolean;
}

type Script = (req: Seen, res: ServerResponse) => void;

let port = 0;
let script: Script = (_q, res) => res.end();
const seen: Seen[] = [];

beforeAll(async () => {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const [path, query = ''] = (req.url ?? '').split('?');
      const auth = parseAuthorization(req.headers.authorization);
      const headers = req.headers as Record<string, string>;
      const signed = !!auth && verify({ method: req.method!, path: path!, query, headers }, auth, 'secret', Date.now(), 60_000).ok;
      const s: Seen = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), signed };
      seen.push(s);
      script(s, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  onTeardown(() => new Promise<void>((r) => server.close(() => r())));
});

function client(): S3ObjectClient {
  const c = new S3ObjectClient({
    bucket: 'kek',
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    maxAttempts: 3,
    idleTimeoutMs: 5000,
    maxSockets: 4,
    credentials: { accessKeyId: 'id', secretAccessKey: 'secret' },
    env: {},
  });
  onTeardown(() => c.destroy());
  return c;
}

const xml = (res: ServerResponse, body: string, status = 200) => {
  res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

describe('the control calls on the wire', () => {
  it('HEAD takes the length from the headers and reads no body; metadata comes back as sent', async () => {
    seen.length = 0;
    script = (q, res) => {
      if (q.method === 'POST') return xml(res, '<InitiateMultipartUploadResult><UploadId>u1</UploadId></InitiateMultipartUploadResult>');
      res.writeHead(200, { 'content-length': '12345', etag: '"e"', 'x-amz-meta-name': q.headers['x-amz-meta-name'] ?? 'café', 'last-modified': 'Tue, 24 Nov 2026 10:00:00 GMT' });
      res.end();
    };
    const c = client();
    const h = await c.head('dir/a b');
    expect(h).toMatchObject({ key: 'dir/a b', size: 12345, etag: 'e', metadata: { name: 'café' } });
    expect(await c.createMultipart('k', { metadata: { name: 'café' }, contentType: 'text/plain' })).toBe('u1');
    expect(seen.map((s) => [s.method, s.url, s.signed])).toEqual([
      ['HEAD', '/kek/dir/a%20b', true],
      ['POST', '/kek/k?uploads=', true],
    ]);
    // Sent as Node's own HTTP client (and so the AWS SDK) sends it: one byte per character.
    expect(seen[1]!.headers['x-amz-meta-name']).toBe('café');
    expect(seen[1]!.headers['content-type']).toBe('text/plain');
  });

  it('lists with list-type=2 and encoding-type=url, and decodes what comes back', async () => {
    seen.length = 0;
    script = (_q, res) =>
      xml(res, '<ListBucketResult><EncodingType>url</EncodingType><Contents><Key>a%1Bb</Key><Size>1</Size></Contents></ListBucketResult>');
    const page = await client().list('p/', { delimiter: '/', maxKeys: 10 });
    expect(page.objects.map((o) => o.key)).toEqual(['a\x1bb']);
    const q = new URL(seen[0]!.url, 'http://x').searchParams;
    expect(Object.fromEntries(q)).toEqual({ 'list-type': '2', prefix: 'p/', delimiter: '/', 'max-keys': '10', 'encoding-type': 'url' });
    expect(seen[0]!.url.startsWith('/kek?')).toBe(true);
    expect(seen[0]!.signed).toBe(true);
  });

  it('DeleteObjects carries the Content-MD5 of its body and no other checksum', async () => {
    seen.length = 0;
    script = (_q, res) => xml(res, '<DeleteResult/>');
    const keys = Array.from({ length: 1500 }, (_, i) => `k&<${i}>`);
    await client().deleteMany(keys);
    expect(seen).toHaveLength(2);
    for (const s of seen) {
      expect(s.url).toBe('/kek?delete=');
      expect(s.headers['content-md5']).toBe(createHash('md5').update(s.body).digest('base64'));
      expect(Object.keys(s.headers).filter((h) => h.startsWith('x-amz-checksum'))).toEqual([]);
      expect(s.signed).toBe(true);
    }
    expect(seen[0]!.body).toContain('<Key>k&#x26;&#x3C;0&#x3E;</Key>');
    script = (_q, res) => xml(res, '<DeleteResult><Error><Key>k</Key><Code>AccessDenied</Code><Message>no</Message></Error></DeleteResult>');
    await expect(client().deleteMany(['k'])).rejects.toThrow('could not delete k: no');
  });

  it('CopyObject names its source encoded, slashes kept, and retries an <Error> sent in a 200', async () => {
    seen.length = 0;
    let n = 0;
    script = (_q, res) =>
      n++ === 0
        ? xml(res, '<Error><Code>InternalError</Code><Message>later</Message></Error>')
        : xml(res, '<CopyObjectResult><ETag>"c1"</ETag></CopyObjectResult>');
    expect(await client().copy('a b/c+d/é', 't', { metadata: { mode: '33188' } })).toEqual({ etag: 'c1' });
    expect(seen).toHaveLength(2);
    expect(seen[1]!.headers['x-amz-copy-source']).toBe('kek/a%20b/c%2Bd/%C3%A9');
    expect(seen[1]!.headers['x-amz-metadata-directive']).toBe('REPLACE');
    expect(seen[1]!.headers['x-amz-meta-mode']).toBe('33188');
    expect(seen[1]!.headers['content-length']).toBe('0');
  });

  it('says so when a CompleteMultipartUpload whose answer was lost finds its upload gone', async () => {
    let n = 0;
    script = (_q, res) => {
      if (n++ === 0) res.socket!.destroy();
      else xml(res, '<Error><Code>NoSuchUpload</Code></Error>', 404);
    };
    const err = await client().completeMultipart('big', 'u1', [{ partNumber: 1, etag: 'e' }]).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/completing the upload of big: an earlier attempt's answer was lost .* may have stored the object/);
    script = (_q, res) => xml(res, '<Error><Code>NoSuchUpload</Code></Error>', 404);
    const plain = await client().completeMultipart('big', 'u1', [{ partNumber: 1, etag: 'e' }]).catch((e: unknown) => e);
    expect(plain).toMatchObject({ kind: 'not-found' });
  });

  it('refuses a listing that is not well-formed XML instead of listing less', async () => {
    script = (_q, res) => xml(res, '<ListBucketResult><Contents><Key>a</Key><Size>1</Size></Contents>');
    await expect(client().list('')).rejects.toThrow(/malformed XML in the answer: cut short/);
    script = (_q, res) => xml(res, '<!DOCTYPE x [<!ENTITY a "b">]><ListBucketResult/>');
    await expect(client().list('')).rejects.toThrow(/document type declaration/);
  });
});

describe('AbortMultipartUpload', () => {
  const answer = (status: number, code: string) => (_q: Seen, res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/xml' });
    res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>m</Message></Error>`);
  };

  it('says when the server refuses the abort, so that it can be tried again', async () => {
    script = answer(403, 'AccessDenied');
    await expect(client().abortMultipart('k', 'u1')).rejects.toMatchObject({ kind: 'access-denied' });
    script = answer(404, 'NoSuchUpload');
    await expect(client().abortMultipart('k', 'u1')).rejects.toMatchObject({ kind: 'not-found' });
  });

  it('takes a server without the operation (405, 501) as having nothing to abort', async () => {
    for (const [status, code] of [
      [405, 'MethodNotAllowed'],
      [501, 'NotImplemented'],
    ] as const) {
      script = answer(status, code);
      await expect(client().abortMultipart('k', 'u1')).resolves.toBeUndefined();
    }
    const last = seen.at(-1)!;
    expect(last.method).toBe('DELETE');
    expect(last.url).toBe('/kek/k?uploadId=u1');
  });
});
