// An HTTP/1.1 origin that sends a Content-Length body and closes the connection right after it,
// without `Connection: close`. docs/DEPENDENCIES.md describes the undici 8.12.4 bug behind it as
// a matter of a slow reader; through the gateway's fill path it strikes a fast client on loopback
// most of the time, so such an origin's objects are never stored and nearly every client sees a
// cut connection. The same response marked no-store (pass-through path) arrives whole every time,
// which shows the gateway can read it.

import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp.ts';
import { type Gateway, pattern, rawOrigin, rawRequest, startGateway } from './gateway-lib.ts';

const N = 131_071;
const body = pattern(N, 3);
let gw: Gateway;
let origin: number;

beforeAll(async () => {
  origin = await rawOrigin((s, head) => {
    const cc = head.includes('nostore') ? 'no-store' : 'max-age=600';
    s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${N}\r\nCache-Control: ${cc}\r\n\r\n`);
    s.end(body);
  });
  gw = await startGateway(['--allow-dest', '@loopback', '--cache-dir', await tempDir('atk-gw-')]);
});

async function fetchMany(kind: string): Promise<string[]> {
  const outcomes: string[] = [];
  for (let i = 0; i < 8; i++) {
    const url = `http://127.0.0.1:${origin}/${kind}/${i}`;
    const r = await rawRequest(gw.port, `GET ${url} HTTP/1.1\r\nHost: 127.0.0.1:${origin}\r\nConnection: close\r\n\r\n`);
    // never wrong bytes, whatever happens
    expect(r.body.equals(body.subarray(0, r.body.length))).toBe(true);
    outcomes.push(`${r.status}:${r.body.length}`);
  }
  return outcomes;
}

describe('origin closes right after a Content-Length body (no Connection: close)', () => {
  it('pass-through (no-store): every client gets the whole body', async () => {
    expect(await fetchMany('nostore')).toEqual(Array(8).fill(`200:${N}`));
  });

  it('storable: every client gets the whole body, as through the pass-through path', async () => {
    expect(await fetchMany('store')).toEqual(Array(8).fill(`200:${N}`));
  });
});
