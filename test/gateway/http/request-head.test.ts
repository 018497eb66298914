import { describe, expect, it } from 'vitest';
import { readRequestHead } from '../../../gateway/http/request-head.ts';

const MAX = 16 * 1024;
const read = (text: string, start = 0) => readRequestHead(Buffer.from(text, 'latin1'), start, MAX);
const kind = (text: string) => read(text).kind;

describe('readRequestHead', () => {
  it('reads a plain GET and HEAD, with the headers a hit may carry', () => {
    const text = 'GET /cvmfs/x/data/ab/cdef HTTP/1.1\r\nHost: s1:3128\r\nUser-Agent:  cvmfs Fuse 2.11 \r\nAccept: */*\r\nConnection: Keep-Alive\r\n\r\n';
    expect(read(text)).toEqual({
      kind: 'plain',
      end: text.length,
      method: 'GET',
      target: '/cvmfs/x/data/ab/cdef',
      headers: { host: 's1:3128', 'user-agent': 'cvmfs Fuse 2.11', accept: '*/*' },
    });
    const head = read('HEAD http://o/x HTTP/1.1\r\nhost: o\r\n\r\n');
    expect(head).toMatchObject({ kind: 'plain', method: 'HEAD', target: 'http://o/x' });
  });

  it('finds the end of each pipelined head, from any start', () => {
    const a = 'GET /a HTTP/1.1\r\nHost: h\r\n\r\n';
    const b = 'GET /b HTTP/1.1\r\nHost: h\r\n\r\n';
    expect(read(a + b, a.length)).toMatchObject({ kind: 'plain', target: '/b', end: a.length + b.length });
  });

  it('leaves a head in pieces as partial, and an overlong one to node:http', () => {
    expect(kind('GET /a HTTP/1.1\r\nHost: h\r\n')).toBe('partial');
    expect(kind('GET /a HTTP/1.1\r\nHost: h\r\n\r')).toBe('partial');
    expect(readRequestHead(Buffer.from(`GET /a HTTP/1.1\r\nX: ${'y'.repeat(100)}`), 0, 64).kind).toBe('opaque');
    expect(readRequestHead(Buffer.from(`GET /a HTTP/1.1\r\nX: ${'y'.repeat(100)}\r\n\r\n`), 0, 64).kind).toBe('opaque');
  });

  it('hands complete bodyless requests that are not plain to node:http alone', () => {
    for (const text of [
      'GET /a HTTP/1.0\r\nHost: h\r\n\r\n',
      'GET /a HTTP/1.1\r\n\r\n',
      'GET /a HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n',
      'GET /a HTTP/1.1\r\nHost: h\r\nRange: bytes=0-1\r\n\r\n',
      'GET /a HTTP/1.1\r\nHost: h\r\nIf-None-Match: "x"\r\n\r\n',
      'GET /a HTTP/1.1\r\nHost: h\r\nCache-Control: no-cache\r\n\r\n',
      'GET /a HTTP/1.1\r\nHost: h\r\nPragma: no-cache\r\n\r\n',
      'GET /a HTTP/1.1\r\nHost: h\r\nAuthorization: AWS4-HMAC-SHA256 x\r\n\r\n',
      'GET /a HTTP/1.1\r\nHost: h\r\nHost: i\r\n\r\n',
      'GET /a HTTP/1.1\r\nHost: h\r\nAccept: a\r\nAccept: b\r\n\r\n',
      'GET /a HTTP/1.1\r\nHost: h\r\nX-Estuary-Peer: p\r\n\r\n',
    ]) {
      expect(read(text), text).toEqual({ kind: 'alone', end: text.length });
    }
  });

  it('judges nothing that frames a body, upgrades, or could be read two ways', () => {
    for (const text of [
      'POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n',
      'PUT /a HTTP/1.1\r\nHost: h\r\n\r\n',
      'CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n',
      'get /a HTTP/1.1\r\nHost: h\r\n\r\n',
      'GET /a HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello',
      'GET /a HTTP/1.1\r\nHost: h\r\ncontent-length: 0\r\n\r\n',
      'GET /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      'GET /a HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n',
      'GET /a HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, Upgrade\r\n\r\n',
      'GET /a HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n\r\n',
      'GET /a HTTP/1.1\r\nHost: h\r\nContent-Length : 5\r\n\r\n',
      'GET /a HTTP/1.1\r\nHost: h\r\n folded\r\n\r\n',
      'GET /a HTTP/1.1\r\nHost: h\nX: y\r\n\r\n',
      'GET /a HTTP/1.1\r\nHost: h\rX: y\r\n\r\n',
      'GET /a HTTP/1.1\r\nHost: h\x00\r\n\r\n',
      'GET /a HTTP/1.1\r\nHost: h\xe9\r\n\r\n',
      'GET /a HTTP/1.1\r\nX\x7fY: h\r\n\r\n',
      'GET /a HTTP/1.1\r\n: h\r\n\r\n',
      'GET /a\x00b HTTP/1.1\r\nHost: h\r\n\r\n',
      'GET /a\xe9 HTTP/1.1\r\nHost: h\r\n\r\n',
      'GET  /a HTTP/1.1\r\nHost: h\r\n\r\n',
      'GET /a  HTTP/1.1\r\nHost: h\r\n\r\n',
      'GET /a HTTP/1.1 \r\nHost: h\r\n\r\n',
      'GET /a HTTP/2.0\r\nHost: h\r\n\r\n',
      'GET /a\r\nHost: h\r\n\r\n',
      '\r\nGET /a HTTP/1.1\r\nHost: h\r\n\r\n',
      'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
    ]) {
      expect(kind(text), JSON.stringify(text)).toBe('opaque');
    }
  });
});
