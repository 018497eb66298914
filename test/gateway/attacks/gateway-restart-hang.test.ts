// One worker (the default). docs/CACHING.md: "a connection that arrives while no worker is ready
// (one worker, between its death and its replacement's start, a second or two) waits for the
// replacement instead of being refused". Kill the worker, connect at once, several times in a
// row: every such request must be answered within a few seconds. The second kill's connection
// hangs with no answer and no close (40 s and more in manual runs).

import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp.ts';
import { rawOrigin, rawRequest, sleep, startGateway } from './gateway-lib.ts';

function workerOf(primary: number): number {
  const out = execFileSync('pgrep', ['-P', String(primary)], { encoding: 'utf8' }).trim().split('\n');
  expect(out).toHaveLength(1);
  return Number(out[0]);
}

describe('a request right after the only worker is killed', () => {
  it('is answered by the replacement, each of three times', { timeout: 60_000 }, async () => {
    const origin = await rawOrigin((s) => s.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok'));
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${origin}`, '--cache-dir', await tempDir('atk-gw-')]);
    const sanity = await rawRequest(gw.port, `GET /a HTTP/1.1\r\nHost: o\r\nConnection: close\r\n\r\n`, 10_000);
    expect(sanity.status).toBe(200);
    const outcomes: string[] = [];
    for (let i = 0; i < 3; i++) {
      const w = workerOf(gw.child.pid);
      process.kill(w, 'SIGKILL');
      const started = Date.now();
      const r = await rawRequest(gw.port, `GET /a?${i} HTTP/1.1\r\nHost: o\r\nConnection: close\r\n\r\n`, 10_000);
      outcomes.push(`${r.status}${r.error ? ` ${r.error}` : ''} after ${Math.round((Date.now() - started) / 1000)} s`);
      // let the replacement settle before the next kill, as an operator's second crash would
      await sleep(2000);
    }
    expect(outcomes.map((o) => o.split(' ')[0]), outcomes.join('; ')).toEqual(['200', '200', '200']);
  });
});
