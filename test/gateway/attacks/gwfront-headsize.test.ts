// Heads near node:http's 16 KiB limit: the front reader must answer 431 exactly where node:http would.
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { onTeardown } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { rawRequest, startGateway } from './gateway-lib.ts';

async function origin(): Promise<number> {
  const srv = http.createServer((_req, res) => {
    res.writeHead(200, { 'cache-control': 'max-age=600' });
    res.end('hello');
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  onTeardown(() => new Promise<void>((r) => { srv.closeAllConnections(); srv.close(() => r()); }));
  return (srv.address() as net.AddressInfo).port;
}

/** Status of each request on one keep-alive connection (the last one closes). */
async function statuses(port: number, heads: string[]): Promise<number[]> {
  const out: number[] = [];
  for (const h of heads) {
    const r = await rawRequest(port, h, 5000);
    out.push(r.status);
  }
  return out;
}

describe('front reader: head size limit', () => {
  it('answers the same status as --no-front-hits for heads around 16 KiB', async () => {
    const o = await origin();
    const on = await startGateway(['--upstream', `o=http://127.0.0.1:${o}`, '--cache-dir', join(await tempDir(), 'c')]);
    const off = await startGateway(['--upstream', `o=http://127.0.0.1:${o}`, '--cache-dir', join(await tempDir(), 'c'), '--no-front-hits']);
    const warm = 'GET /o/x HTTP/1.1\r\nHost: o\r\nConnection: close\r\n\r\n';
    for (const g of [on, off]) for (let i = 0; i < 3; i++) await rawRequest(g.port, warm);
    const heads: string[] = [];
    const sizes: number[] = [];
    for (let total = 16_360; total <= 16_400; total++) {
      const fixed = 'GET /o/x HTTP/1.1\r\nHost: o\r\nUser-Agent: \r\n\r\n';
      // A pipelined close after it, so rawRequest returns as soon as the connection closes.
      heads.push(`GET /o/x HTTP/1.1\r\nHost: o\r\nUser-Agent: ${'u'.repeat(total - fixed.length)}\r\n\r\nGET /o/x HTTP/1.1\r\nHost: o\r\nConnection: close\r\n\r\n`);
      sizes.push(total);
    }
    const a = await statuses(on.port, heads);
    const b = await statuses(off.port, heads);
    const diff = sizes.filter((_s, i) => a[i] !== b[i]).map((s, _i) => `${s}: front ${a[sizes.indexOf(s)]} vs node ${b[sizes.indexOf(s)]}`);
    expect(diff).toEqual([]);
  }, 60_000);
});
