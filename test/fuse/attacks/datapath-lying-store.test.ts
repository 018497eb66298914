// The mount's data path (fuse/s3/data-path.ts) against a store, or a proxy in front of one, that
// answers a ranged GET with other bytes than were asked for. The answer names what it carries
// (Content-Range, Content-Length); a data path that believes the bytes are the ones it asked for
// hands a reader the wrong part of the file, or too little of it, without an error.
//
// Expected (docs/SEMANTICS.md: the mount never returns wrong bytes; a store's failure is an errno,
// never silent corruption): getPieces hands over exactly the bytes of the range asked for, or
// fails (after its retries); never bytes from elsewhere in the object, never fewer than the object
// holds in the range.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { DataPath } from '../../../fuse/s3/data-path.ts';
import { SlabPool } from '../../../fuse/s3/slab-pool.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';

afterAll(runTeardowns);

const OBJECT = Buffer.alloc(4096);
for (let i = 0; i < OBJECT.length; i++) OBJECT[i] = (i * 7 + (i >> 8)) & 0xff;

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

async function store(handler: Handler): Promise<{ d: DataPath; requests: () => number }> {
  let n = 0;
  const server = createServer((req, res) => handler(req, res, n++));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const d = new DataPath({
    bucketUrl: new URL(`http://127.0.0.1:${port}/bucket`),
    region: 'us-east-1',
    credentials: async () => ({ accessKeyId: 'a', secretAccessKey: 's' }),
    maxAttempts: 3,
    idleTimeoutMs: 5000,
    maxSockets: 2,
    slabs: new SlabPool(),
  });
  onTeardown(async () => {
    await d.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  return { d, requests: () => n };
}

function ranged(req: IncomingMessage): { first: number; last: number } {
  const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '')!;
  return { first: Number(m[1]), last: Number(m[2]) };
}

/** The pieces of getPieces joined, or the error it failed with. */
async function pieces(d: DataPath, start: number, end: number): Promise<Buffer | Error> {
  const out: Buffer[] = [];
  return d.getPieces('k', { start, end, ifMatch: 'v1' }, (p) => out.push(Buffer.from(p))).then(
    () => Buffer.concat(out),
    (e: Error) => e,
  );
}

describe('datapath attack: a store that answers a range with other bytes', () => {
  it('a 206 whose Content-Range starts elsewhere is not handed over as the bytes asked for', async () => {
    const { d } = await store((req, res) => {
      const { first, last } = ranged(req);
      const len = last - first + 1;
      // A proxy that served the start of its cached copy instead: a consistent answer, other bytes.
      res.writeHead(206, {
        etag: '"v1"',
        'content-length': String(len),
        'content-range': `bytes 0-${len - 1}/${OBJECT.length}`,
      });
      res.end(OBJECT.subarray(0, len));
    });
    const got = await pieces(d, 1000, 1100);
    if (got instanceof Error) return; // refusing is right
    expect(got.equals(OBJECT.subarray(1000, 1100))).toBe(true);
  });

  it('a 206 longer than the range asked hands over no bytes past the range', async () => {
    const { d } = await store((req, res) => {
      const { first } = ranged(req);
      const last = Math.min(OBJECT.length - 1, first + 999);
      res.writeHead(206, {
        etag: '"v1"',
        'content-length': String(last - first + 1),
        'content-range': `bytes ${first}-${last}/${OBJECT.length}`,
      });
      res.end(OBJECT.subarray(first, last + 1));
    });
    const got = await pieces(d, 1000, 1100);
    if (got instanceof Error) return;
    expect(got.length).toBe(100);
    expect(got.equals(OBJECT.subarray(1000, 1100))).toBe(true);
  });

  it('a 206 shorter than the range, inside the object, is not a short file', async () => {
    const { d } = await store((req, res, n) => {
      const { first, last } = ranged(req);
      // The first answer stops half way (a consistent but short answer); later ones are whole.
      const end = n === 0 ? first + Math.floor((last - first + 1) / 2) - 1 : last;
      res.writeHead(206, {
        etag: '"v1"',
        'content-length': String(end - first + 1),
        'content-range': `bytes ${first}-${end}/${OBJECT.length}`,
      });
      res.end(OBJECT.subarray(first, end + 1));
    });
    const got = await pieces(d, 1000, 3000);
    // Either the rest is fetched, or the read fails: never 1000 bytes where the object has 2000.
    if (got instanceof Error) return;
    expect(got.length).toBe(2000);
    expect(got.equals(OBJECT.subarray(1000, 3000))).toBe(true);
  });

  it('a 206 sent chunked, without Content-Length, is read like any other', async () => {
    // HTTP/1.1 lets any answer be chunked; a proxy in front of the store (or a store that streams
    // from its backend) sends ranged answers this way. The AWS SDK the data path replaced read
    // them; refusing them fails every read of the mount with EIO.
    const { d } = await store((req, res) => {
      const { first, last } = ranged(req);
      res.writeHead(206, { etag: '"v1"', 'content-range': `bytes ${first}-${last}/${OBJECT.length}` });
      res.write(OBJECT.subarray(first, first + 10));
      res.end(OBJECT.subarray(first + 10, last + 1));
    });
    const got = await pieces(d, 1000, 1100);
    expect(got).toBeInstanceOf(Buffer);
    expect((got as Buffer).equals(OBJECT.subarray(1000, 1100))).toBe(true);
  });

  it('an answer with bytes past its Content-Length does not fail the next read on that socket', async () => {
    // The first answer carries 20 stray bytes after its body on a kept-alive connection. That
    // answer itself is whole; the next request sent on the same socket then parses garbage. That
    // is the connection's fault, not the request's: it is retried on a fresh one (as a reset is),
    // instead of failing a read that the store would answer.
    const { d } = await store((req, res, n) => {
      const { first, last } = ranged(req);
      const body = OBJECT.subarray(first, last + 1);
      if (n === 0) {
        res.socket!.write(
          `HTTP/1.1 206 Partial Content\r\netag: "v1"\r\ncontent-length: ${body.length}\r\n` +
            `content-range: bytes ${first}-${last}/${OBJECT.length}\r\nconnection: keep-alive\r\n\r\n`,
        );
        res.socket!.write(Buffer.concat([body, Buffer.from('garbage-garbage-garb')]));
        return;
      }
      res.writeHead(206, {
        etag: '"v1"',
        'content-length': String(body.length),
        'content-range': `bytes ${first}-${last}/${OBJECT.length}`,
      });
      res.end(body);
    });
    const one = await pieces(d, 0, 100);
    expect((one as Buffer).equals(OBJECT.subarray(0, 100))).toBe(true);
    const two = await pieces(d, 200, 300);
    expect(two).toBeInstanceOf(Buffer);
    expect((two as Buffer).equals(OBJECT.subarray(200, 300))).toBe(true);
  });

  it('a body cut mid-way is retried for the rest and the bytes are whole (regression)', async () => {
    const { d, requests } = await store((req, res, n) => {
      const { first, last } = ranged(req);
      res.writeHead(206, {
        etag: '"v1"',
        'content-length': String(last - first + 1),
        'content-range': `bytes ${first}-${last}/${OBJECT.length}`,
      });
      if (n === 0) {
        res.write(OBJECT.subarray(first, first + 300));
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      res.end(OBJECT.subarray(first, last + 1));
    });
    const got = await pieces(d, 500, 2500);
    expect(got).toBeInstanceOf(Buffer);
    expect((got as Buffer).equals(OBJECT.subarray(500, 2500))).toBe(true);
    expect(requests()).toBe(2);
  });
});
