// The front reader on its own, over real loopback sockets, with node:http behind it and an answer
// function standing in for the cache: its idle limit, write back-pressure, a FIN behind pipelined
// requests, and a failing answer.

import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { FrontReader } from '../../gateway/front-reader.ts';
import { onTeardown } from '../helpers/cleanup.ts';
import { getHead, RawConnection } from './helpers/raw-client.ts';

const HIT = Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nhit');

async function reader(answer: (target: string) => readonly Buffer[] | undefined, idleMs = 60_000, headersTimeoutMs = 60_000): Promise<string> {
  const http = createHttpServer({ optimizeEmptyRequests: true }, (req, res) => {
    front.started(req, res);
    res.writeHead(200, { 'content-length': 4 });
    res.end('full');
  });
  const front = new FrontReader({
    answer: (head) => answer(head.target),
    maxHeadBytes: 16 * 1024,
    idleMs,
    headersTimeoutMs,
    onSlowHead: (socket) => socket.end('HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\n\r\n'),
    log: pino({ level: 'silent' }),
  });
  const httpConnection = http.listeners('connection')[0] as (s: Socket) => void;
  const server: Server = createServer((socket) => front.attach(socket, () => httpConnection.call(http, socket)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTeardown(
    () =>
      new Promise<void>((r) => {
        front.closeAll();
        server.close(() => r());
      }),
  );
  const port = (server.address() as { port: number }).port;
  return `http://127.0.0.1:${port}`;
}

describe('the front reader, alone', () => {
  it('closes a connection idle past its limit, and not one in use', async () => {
    const url = await reader(() => [HIT], 400);
    const busy = await RawConnection.open(url);
    const idle = await RawConnection.open(url);
    idle.write(getHead('/x', 'h'));
    expect((await idle.read()).body.toString()).toBe('hit');
    for (let i = 0; i < 6; i++) {
      busy.write(getHead('/x', 'h'));
      expect((await busy.read()).body.toString()).toBe('hit');
      await new Promise((r) => setTimeout(r, 150));
    }
    expect(idle.closed).toBe(true);
    expect(busy.closed).toBe(false);
  });

  it('answers 408 to a connection silent past the header timeout, and keeps one that spoke to the idle limit', async () => {
    const url = await reader(() => [HIT], 1500, 300);
    const silent = await RawConnection.open(url);
    const spoke = await RawConnection.open(url);
    spoke.write(getHead('/x', 'h'));
    await spoke.read();
    expect((await silent.read(false, 2000)).status).toBe(408);
    await silent.waitClosed(1000);
    await new Promise((r) => setTimeout(r, 400));
    expect(spoke.closed).toBe(false);
    spoke.write(getHead('/x', 'h'));
    expect((await spoke.read()).body.toString()).toBe('hit');
  });

  it('answers requests pipelined behind an answer the client is slow to read, in order', async () => {
    const big = Buffer.alloc(4 * 1024 * 1024, 'z');
    const bigHit = [Buffer.from(`HTTP/1.1 200 OK\r\ncontent-length: ${big.length}\r\n\r\n`), big];
    const url = await reader((t) => (t === '/big' ? bigHit : t === '/hit' ? [HIT] : undefined));
    const c = await RawConnection.open(url);
    c.socket.pause();
    c.write(getHead('/big', 'h') + getHead('/miss', 'h') + getHead('/hit', 'h') + getHead('/big', 'h'));
    await new Promise((r) => setTimeout(r, 200));
    c.socket.resume();
    expect((await c.read()).body.length).toBe(big.length);
    expect((await c.read()).body.toString()).toBe('full');
    expect((await c.read()).body.toString()).toBe('hit');
    expect((await c.read()).body.length).toBe(big.length);
  });

  it('answers every request sent before the client half-closed, then closes', async () => {
    const url = await reader((t) => (t === '/hit' ? [HIT] : undefined));
    const c = await RawConnection.open(url);
    c.write(getHead('/hit', 'h') + getHead('/hit', 'h'));
    c.socket.end();
    expect((await c.read()).body.toString()).toBe('hit');
    expect((await c.read()).body.toString()).toBe('hit');
    await c.waitClosed();
  });

  it('hands a request whose answer throws to node:http', async () => {
    const url = await reader(() => {
      throw new Error('broken entry');
    });
    const c = await RawConnection.open(url);
    c.write(getHead('/x', 'h') + getHead('/y', 'h'));
    expect((await c.read()).body.toString()).toBe('full');
    expect((await c.read()).body.toString()).toBe('full');
  });
});
