// The data path's HTTP/1.1 response reader on its own: every framing, fed in pieces of every
// size, and the framings it refuses (a body framed wrongly must never become file data).

import { describe, expect, it } from 'vitest';
import { HttpFramingError, type ResponseHeaders, ResponseReader } from '../../../fuse/s3/http1-response.ts';

interface Read {
  status: number;
  headers: ResponseHeaders;
  body: string;
  done: boolean;
  /** Bytes left after the answer ended. */
  rest: number;
  reader: ResponseReader;
}

/** Feeds `wire` in pieces of `step` bytes; what the reader made of it. */
function read(wire: string, step = wire.length): Read {
  const out = { status: 0, headers: {} as ResponseHeaders, body: '', done: false, rest: 0 };
  const reader = new ResponseReader({
    onHead: (status, headers) => Object.assign(out, { status, headers }),
    onBody: (view) => (out.body += view.toString('latin1')),
  });
  const buf = Buffer.from(wire, 'latin1');
  for (let at = 0; at < buf.length && !reader.done; at += step) {
    const to = Math.min(buf.length, at + step);
    const ended = reader.feed(buf, at, to);
    if (reader.done) out.rest = buf.length - ended;
  }
  return { ...out, done: reader.done, reader };
}

const steps = [1, 2, 3, 7, 1000];

describe('HTTP/1.1 response reader', () => {
  it('reads a Content-Length body in pieces of any size, and returns what follows it', () => {
    const wire = 'HTTP/1.1 206 Partial Content\r\nContent-Length: 10\r\nETag: "e"\r\nX-Amz-Meta-A: 1\r\nX-Amz-Meta-A: 2\r\n\r\n0123456789NEXT';
    for (const step of steps) {
      const r = read(wire, step);
      expect(r).toMatchObject({ status: 206, body: '0123456789', done: true });
      expect(r.headers).toMatchObject({ 'content-length': '10', etag: '"e"', 'x-amz-meta-a': ['1', '2'] });
      expect(r.reader.keepAlive).toBe(true);
      if (step === 1000) expect(r.rest).toBe(4);
    }
  });

  it('reads a chunked body with extensions and trailers, split anywhere', () => {
    const wire = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\nA\r\n, world!!!\r\n0\r\nX-T: 1\r\n\r\n';
    for (const step of steps) expect(read(wire, step)).toMatchObject({ body: 'hello, world!!!', done: true, rest: 0 });
  });

  it('a body with neither length nor chunks ends with the connection, which is not kept', () => {
    const r = read('HTTP/1.1 200 OK\r\n\r\nabc');
    expect(r).toMatchObject({ body: 'abc', done: false });
    expect(r.reader.keepAlive).toBe(false);
    expect(r.reader.end()).toBe(true);
    // A Content-Length body cut by the close is not complete.
    const cut = read('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabc');
    expect(cut.reader.end()).toBe(false);
  });

  it('knows answers without a body, and when the connection may carry another request', () => {
    expect(read('HTTP/1.1 204 No Content\r\nContent-Length: 3\r\n\r\n')).toMatchObject({ done: true, body: '' });
    expect(read('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n')).toMatchObject({ done: true, body: '' });
    expect(read('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n').reader.keepAlive).toBe(false);
    expect(read('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n').reader.keepAlive).toBe(false);
    const timed = read('HTTP/1.1 200 OK\r\nKeep-Alive: timeout=3\r\nContent-Length: 0\r\n\r\n').reader;
    expect([timed.keepAlive, timed.keepAliveSeconds]).toEqual([true, 3]);
  });

  it('skips interim (1xx) answers, split anywhere, and reads the final one', () => {
    const wire =
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n' +
      'HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n' +
      'HTTP/1.1 206 Partial Content\r\nContent-Length: 3\r\nETag: "e"\r\n\r\nabc';
    for (const step of steps) {
      const r = read(wire, step);
      expect(r).toMatchObject({ status: 206, body: 'abc', done: true, rest: 0 });
      expect(r.headers).toEqual({ 'content-length': '3', etag: '"e"' });
    }
  });

  it("ends an answer whose caller said 'enough', the rest unread and the connection not reusable", () => {
    let body = '';
    const reader = new ResponseReader({
      onHead: () => undefined,
      onBody: (view) => {
        body += view.toString('latin1');
        return body.length >= 4 ? 'enough' : undefined;
      },
    });
    const wire = Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789', 'latin1');
    let at = 0;
    while (at < wire.length && !reader.done) at = reader.feed(wire, at, at + 1);
    expect({ body, done: reader.done, cut: reader.cut, keepAlive: reader.keepAlive }).toEqual({ body: '0123', done: true, cut: true, keepAlive: false });
  });

  it.each([
    ['a 101 Switching Protocols nobody asked for', 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx'],
    ['interim answers past 64 KiB of headers', `${'HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n'.repeat(2000)}HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx`],
    ['Transfer-Encoding and Content-Length together', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n'],
    ['a Transfer-Encoding other than chunked', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n'],
    ['Content-Lengths that disagree', 'HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd'],
    ['a Content-Length that is no number', 'HTTP/1.1 200 OK\r\nContent-Length: 3x\r\n\r\nabc'],
    ['chunk data longer than its size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n'],
    ['a chunk size that is no number', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n'],
    ['a folded header line', 'HTTP/1.1 200 OK\r\nX-A: 1\r\n 2\r\nContent-Length: 0\r\n\r\n'],
    ['a space before the colon', 'HTTP/1.1 200 OK\r\nContent-Length : 1\r\n\r\nx'],
    ['a status line of another protocol', 'HTTP/2 200 OK\r\nContent-Length: 0\r\n\r\n'],
  ])('refuses %s, whatever the pieces', (_what, wire) => {
    for (const step of steps) expect(() => read(wire, step)).toThrow(HttpFramingError);
  });
});
