// SIGHUP is what a closing terminal or a logrotate postrotate script sends. The gateway stops
// gracefully on SIGTERM/SIGINT (fills finish, clients get their bodies, "stopping" is logged);
// on SIGHUP it must not die silently in the middle of its clients' transfers.

import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/tmp.ts';
import { pattern, rawOrigin, rawRequest, sleep, startGateway } from './gateway-lib.ts';

const N = 100_000;

describe('gateway and SIGHUP', () => {
  it('a transfer in flight at SIGHUP ends whole, and the signal is logged', async () => {
    const body = pattern(N, 5);
    const origin = await rawOrigin((s) => {
      s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${N}\r\nCache-Control: max-age=600\r\n\r\n`);
      let off = 0;
      const t = setInterval(() => {
        if (s.destroyed || off >= N) return clearInterval(t);
        s.write(body.subarray(off, off + 10_000));
        off += 10_000;
      }, 150);
    });
    const gw = await startGateway(['--allow-dest', '@loopback', '--workers', '2', '--cache-dir', await tempDir('atk-gw-')]);
    const url = `http://127.0.0.1:${origin}/obj`;
    const reply = rawRequest(gw.port, `GET ${url} HTTP/1.1\r\nHost: 127.0.0.1:${origin}\r\nConnection: close\r\n\r\n`);
    await sleep(600);
    const before = gw.child.output().length;
    gw.child.proc.kill('SIGHUP');
    const r = await reply;
    expect(r.body.length).toBe(N);
    expect(r.body.equals(body)).toBe(true);
    expect(gw.child.output().slice(before)).toMatch(/SIGHUP/);
  });
});
