// A response that is not stored (no freshness, or a request with Authorization) goes straight
// through. When its upstream body breaks, the failure must not be silent: a failure before the
// first body byte is a 502 with Proxy-Status (docs/CACHING.md, "Limits worth knowing"), and every
// failure is logged ("upstream failed") and written to the access log, as it is for stored fills.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp.ts';
import { type Gateway, rawOrigin, rawRequest, sleep, startGateway } from './gateway-lib.ts';

let gw: Gateway;
let origin: number;
let accessLog: string;

const replies: Record<string, string> = {
  // a chunk size that is not hex: the body fails before its first byte
  '/bad-chunk': 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n',
  // a chunk size that overflows
  '/big-chunk': 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\nab',
  // fewer bytes than Content-Length, then close
  '/short': 'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhello',
  // a CVMFS content-addressed object whose bytes do not match its name
  '/cvmfs/x.cern.ch/data/a1/c33e10b1d3f7ae8bd39e3d3578a3b18f5dd2e6': 'HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbad!',
};

beforeAll(async () => {
  origin = await rawOrigin((s, head) => {
    // The gateway sends origin-form (path and query) to the origin: the query is not part of the reply's key.
    const path = /^GET http:\/\/[^/]+(\/[^ ?]*)/.exec(head)?.[1] ?? head.split(' ')[1]!.split('?')[0]!;
    if (path.startsWith('/cvmfs/')) return void s.end(Object.entries(replies).find(([k]) => k.startsWith('/cvmfs/'))![1]);
    s.end(replies[path] ?? 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n');
  });
  const dir = await tempDir('atk-gw-');
  accessLog = join(dir, 'access.log');
  gw = await startGateway(['--allow-dest', '@loopback', '--cache-dir', join(dir, 'cache'), '--access-log', accessLog]);
});

function get(path: string, extra = ''): Promise<Awaited<ReturnType<typeof rawRequest>>> {
  return rawRequest(gw.port, `GET http://127.0.0.1:${origin}${path} HTTP/1.1\r\nHost: 127.0.0.1:${origin}\r\n${extra}Connection: close\r\n\r\n`);
}

describe('pass-through responses whose upstream body breaks', () => {
  it.each(['/bad-chunk', '/big-chunk'])('%s before the first body byte: 502 with Proxy-Status, not an empty reply', async (path) => {
    const r = await get(path);
    expect(r.status, `reply was ${JSON.stringify(r.head)}`).toBe(502);
    expect(r.head).toMatch(/proxy-status: estuary; error=/i);
  });

  it.each([
    ['/bad-chunk', ''],
    ['/short', ''],
    ['/short', 'Authorization: Bearer x\r\n'],
  ])('%s (%s) is logged and written to the access log', async (path, extra) => {
    const tagged = `${path}?t=${Math.random().toString(36).slice(2)}`;
    await get(tagged, extra);
    await sleep(500);
    expect(gw.child.output()).toContain(tagged);
    expect(await readFile(accessLog, 'utf8')).toContain(tagged);
  });
});

describe('a stored fill that fails after its headers went out (CVMFS hash mismatch)', () => {
  it('the cut request is in the access log and in estuary_gateway_requests_total', async () => {
    const metric = async () => {
      const m = await rawRequest(gw.port, `GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      return [...m.body.toString().matchAll(/^estuary_gateway_requests_total\{[^}]*\} (\d+)/gm)].reduce((a, x) => a + Number(x[1]), 0);
    };
    const before = await metric();
    const path = `/cvmfs/x.cern.ch/data/a1/c33e10b1d3f7ae8bd39e3d3578a3b18f5dd2e6`;
    const r = await get(path);
    // never a whole-looking body: cut before its last byte
    expect(r.body.length).toBeLessThan(4);
    await sleep(500);
    expect(await readFile(accessLog, 'utf8')).toContain(path);
    expect(await metric()).toBeGreaterThanOrEqual(before + 1);
  });
});
