// Disk hits go out in pooled slices (gateway/proxy/slices.ts): a slice returns to the pool only
// once the socket wrote it. Regression: pipelined disk hits on one connection, read slowly, while
// other clients stream other objects through the same pool, get exactly their own bytes.

import net from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp.ts';
import { type Gateway, pattern, rawOrigin, rawRequest, sleep, startGateway } from './gateway-lib.ts';

const N = 3 * 1024 * 1024 + 17;
const bodies = [pattern(N, 1), pattern(N, 2)];
let gw: Gateway;
let origin: number;

beforeAll(async () => {
  origin = await rawOrigin((s, head) => {
    const b = bodies[head.includes('/obj1') ? 1 : 0]!;
    s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${N}\r\nCache-Control: max-age=600\r\nConnection: close\r\n\r\n`);
    s.end(b);
  });
  gw = await startGateway([
    '--allow-dest', '@loopback', '--mem-object-max', '1KiB', '--cache-dir', await tempDir('atk-pool-'),
  ]);
});

const req = (i: number, close = false) =>
  `GET http://127.0.0.1:${origin}/obj${i} HTTP/1.1\r\nHost: 127.0.0.1:${origin}\r\n${close ? 'Connection: close\r\n' : ''}\r\n`;

/** Sends pipelined requests and reads the connection slowly (pausing between chunks). */
function slowPipelined(order: number[]): Promise<Buffer> {
  return new Promise((resolve) => {
    const s = net.connect(gw.port, '127.0.0.1', () => s.write(order.map((i, k) => req(i, k === order.length - 1)).join('')));
    const parts: Buffer[] = [];
    s.on('data', (d) => {
      parts.push(d);
      s.pause();
      setTimeout(() => s.resume(), 2);
    });
    s.on('error', () => undefined);
    s.on('close', () => resolve(Buffer.concat(parts)));
  });
}

function split(all: Buffer, count: number): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  for (let k = 0; k < count; k++) {
    const i = all.indexOf('\r\n\r\n', at);
    expect(i).toBeGreaterThan(-1);
    out.push(all.subarray(i + 4, i + 4 + N));
    at = i + 4 + N;
  }
  return out;
}

describe('pooled slices under pipelining and slow readers', () => {
  it('every pipelined disk hit carries its own object', async () => {
    for (const i of [0, 1]) expect((await rawRequest(gw.port, req(i, true))).status).toBe(200);
    await sleep(200);
    const order = [0, 1, 0, 1];
    const [slow, ...fast] = await Promise.all([
      slowPipelined(order),
      ...Array.from({ length: 6 }, (_, k) => rawRequest(gw.port, req(k % 2, true))),
    ]);
    split(slow, order.length).forEach((b, k) => expect(b.equals(bodies[order[k]!]!)).toBe(true));
    fast.forEach((r, k) => expect(r.body.equals(bodies[k % 2]!)).toBe(true));
  }, 40_000);
});
