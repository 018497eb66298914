// SIGHUP is what a closing terminal or a logrotate postrotate script sends. The gateway stops
// gracefully on SIGTERM/SIGINT (fills finish, clients get their bodies, "stopping" is logged);
// on SIGHUP it must not die silently in the middle of its clients' transfers.

import { readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp.ts';
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

  it('reopens --access-log, as Squid does on -k rotate (logrotate moves the file, then sends HUP)', async () => {
    const origin = await rawOrigin((s) => s.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok'));
    const dir = await tempDir('atk-gw-');
    const log = join(dir, 'access.log');
    const gw = await startGateway(['--allow-dest', '@loopback', '--cache-dir', join(dir, 'c'), '--access-log', log]);
    const get = (p: string) =>
      rawRequest(gw.port, `GET http://127.0.0.1:${origin}/${p} HTTP/1.1\r\nHost: 127.0.0.1:${origin}\r\nConnection: close\r\n\r\n`);
    await get('before');
    await sleep(300);
    await rename(log, `${log}.1`);
    gw.child.proc.kill('SIGHUP');
    await gw.child.waitFor(/access log reopened/, 10_000);
    await get('after');
    await sleep(300);
    expect(await readFile(`${log}.1`, 'utf8')).toContain('/before');
    const now = await readFile(log, 'utf8');
    expect(now).toContain('/after');
    expect(now).not.toContain('/before');
  });
});
