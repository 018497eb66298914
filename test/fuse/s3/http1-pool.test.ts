// The data path's connections against a raw TCP server that answers byte for byte what each test
// scripts: connections kept and used again, a connection closed inside an answer, bytes after an
// answer, a server that closed a kept-alive connection, one that goes silent.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer as httpsServer } from 'node:https';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Http1Pool } from '../../../fuse/s3/http1-pool.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);

/** Calls `answer` with each request's head as it arrives on a connection (its index counted from 0). */
async function rawServer(answer: (socket: Socket, head: string, conn: number) => void): Promise<{ url: URL; connections: () => number }> {
  let conns = 0;
  const sockets = new Set<Socket>();
  const s = createServer((socket) => {
    const conn = conns++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let pending = '';
    socket.on('data', (d) => {
      pending += d.toString('latin1');
      let end: number;
      while ((end = pending.indexOf('\r\n\r\n')) >= 0) {
        const head = pending.slice(0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (pending.length < end + 4 + length) return;
        pending = pending.slice(end + 4 + length);
        answer(socket, head, conn);
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  onTeardown(() => new Promise<void>((r) => {
    for (const c of sockets) c.destroy();
    s.close(() => r());
  }));
  return { url: new URL(`http://127.0.0.1:${(s.address() as AddressInfo).port}/b`), connections: () => conns };
}

function pool(url: URL, idleTimeoutMs = 5000): Http1Pool {
  const p = new Http1Pool({ url, maxSockets: 2, connectTimeoutMs: 2000, idleTimeoutMs });
  onTeardown(() => p.close());
  return p;
}

/** One GET through `p`: the status and body, or the error. */
async function get(p: Http1Pool, body?: Buffer): Promise<{ status: number; body: string } | { code: string }> {
  let status = 0;
  let text = '';
  try {
    await p.request(
      { method: body ? 'PUT' : 'GET', path: '/b/k', headers: { 'x-a': '1' }, body },
      { onHead: (s) => (status = s), onBody: (v) => (text += v.toString()) },
    );
    return { status, body: text };
  } catch (err) {
    return { code: (err as { code: string }).code };
  }
}

describe('data path connections', () => {
  it('sends host, headers and body, and uses one connection for requests one after another', async () => {
    const heads: string[] = [];
    const { url, connections } = await rawServer((socket, head) => {
      heads.push(head);
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
    });
    const p = pool(url);
    expect(await get(p, Buffer.from('abc'))).toEqual({ status: 200, body: 'ok' });
    expect(await get(p)).toEqual({ status: 200, body: 'ok' });
    expect(connections()).toBe(1);
    expect(heads[0]).toBe(`PUT /b/k HTTP/1.1\r\nhost: ${url.host}\r\nx-a: 1\r\ncontent-length: 3`);
  });

  it('fails an answer whose connection closes inside its body, and one followed by bytes nobody asked for', async () => {
    const { url } = await rawServer((socket, _head, conn) => {
      if (conn === 0) socket.end('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n01234');
      else socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokX');
    });
    const p = pool(url);
    expect(await get(p)).toEqual({ code: 'ECONNRESET' });
    expect(await get(p)).toEqual({ code: 'EPROTO' });
  });

  it('sends a request again on a new connection when the server had closed the kept-alive one', async () => {
    const { url, connections } = await rawServer((socket, _head, conn) => {
      // The first connection answers once, then drops the next request unanswered.
      if (conn === 0 && socket.bytesWritten > 0) return void socket.destroy();
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
    });
    const p = pool(url);
    expect(await get(p)).toEqual({ status: 200, body: 'ok' });
    expect(await get(p)).toEqual({ status: 200, body: 'ok' });
    expect(connections()).toBe(2);
  });

  it('leaves a POST whose kept-alive connection closed unanswered to the caller, not sending it again', async () => {
    const { url, connections } = await rawServer((socket, head, conn) => {
      if (conn === 0 && head.startsWith('POST')) return void socket.destroy();
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
    });
    const p = pool(url);
    expect(await get(p)).toEqual({ status: 200, body: 'ok' });
    const post = await p.request({ method: 'POST', path: '/b/k?uploadId=u', headers: {}, body: Buffer.alloc(0) }, { onHead: () => {}, onBody: () => {} }).then(
      () => 'sent',
      (err: { code?: string }) => err.code,
    );
    expect(post).toBe('ECONNRESET');
    expect(connections()).toBe(1);
  });

  it('skips a stray CRLF after an answer on a kept-alive connection', async () => {
    const { url, connections } = await rawServer((socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok\r\n'));
    const p = pool(url);
    expect(await get(p)).toEqual({ status: 200, body: 'ok' });
    expect(await get(p)).toEqual({ status: 200, body: 'ok' });
    expect(connections()).toBe(1);
  });

  it('gives up on a connection that goes silent while a request is on it', async () => {
    const { url } = await rawServer((socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab'));
    expect(await get(pool(url, 300))).toEqual({ code: 'ETIMEDOUT' });
  });

  it('refuses a header value that would end the header early, before sending anything', async () => {
    const { url, connections } = await rawServer((socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'));
    const p = pool(url);
    const events = { onHead: () => {}, onBody: () => {} };
    await expect(p.request({ method: 'GET', path: '/b/k', headers: { 'x-amz-meta-a': 'v\r\nx-evil: 1' } }, events)).rejects.toMatchObject({ code: 'EINVAL' });
    expect(connections()).toBe(0);
  });

  it('fails requests under way when closed', async () => {
    const { url } = await rawServer(() => {});
    const p = pool(url);
    const pending = get(p);
    await new Promise((r) => setTimeout(r, 100));
    p.close();
    expect(await pending).toEqual({ code: 'ECONNRESET' });
  });

  it('speaks TLS to an https endpoint and refuses one whose certificate it cannot verify', async () => {
    const dir = await tempDir('estuary-http1-tls-');
    const [key, cert] = [join(dir, 'k.pem'), join(dir, 'c.pem')];
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' });
    let asked = 0;
    const s = httpsServer({ key: readFileSync(key), cert: readFileSync(cert) }, (_req, res) => {
      asked++;
      res.end('secret');
    });
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    onTeardown(() => new Promise<void>((r) => s.close(() => r())));
    const url = new URL(`https://127.0.0.1:${(s.address() as AddressInfo).port}/b`);
    expect(await get(pool(url))).toEqual({ code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
    expect(asked).toBe(0);
  });
});
