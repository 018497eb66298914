// --workers 2: a worker killed while it fetches an object that a client of the other worker is
// following. The promise (docs/CACHING.md, "Limits worth knowing"): clients of other workers do
// not notice. A follower that has not received a byte can still be served whole (as after ENOSPC,
// where such clients are passed through); it must not get a 502 caused by the other worker's death.

import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp.ts';
import { pattern, pidsOnPort, rawOrigin, rawRequest, sleep, startGateway } from './gateway-lib.ts';

const N = 200_000;

describe('gateway --workers 2, the fetching worker is killed', () => {
  it('a client of the surviving worker that follows the fill gets the whole object, not a 502', async () => {
    const body = pattern(N);
    let hits = 0;
    const origin = await rawOrigin((s) => {
      hits++;
      s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${N}\r\nCache-Control: max-age=600\r\n\r\n`);
      // The first fetch sends its headers and then waits: the worker is killed before any body
      // byte, so no client has received anything yet. Later fetches send at once.
      let off = 0;
      const first = hits === 1;
      // counted from this fetch, not from the test's start: a slow gateway start must not use it up
      const started = Date.now();
      const t = setInterval(() => {
        if (first && Date.now() - started < 3000) return;
        if (s.destroyed || off >= N) return clearInterval(t);
        s.write(body.subarray(off, off + 10_000));
        off += 10_000;
      }, 150);
    });
    const dir = await tempDir('atk-gw-');
    const gw = await startGateway(['--allow-dest', '@loopback', '--workers', '2', '--cache-dir', dir]);
    const url = `http://127.0.0.1:${origin}/obj`;
    const req = `GET ${url} HTTP/1.1\r\nHost: 127.0.0.1:${origin}\r\nConnection: close\r\n\r\n`;
    // Eight connections, spread over both workers by the primary.
    const replies = [];
    for (let i = 0; i < 8; i++) {
      replies.push(rawRequest(gw.port, req, 40_000));
      await sleep(50);
    }
    await sleep(800);
    const fetcher = pidsOnPort(origin, 'peer').filter((p) => p !== process.pid);
    expect(fetcher).toHaveLength(1);
    const byWorker = pidsOnPort(gw.port);
    // both workers hold clients, or the test shows nothing
    expect(byWorker.filter((p) => p !== process.pid).length).toBe(2);
    process.kill(fetcher[0]!, 'SIGKILL');
    const results = await Promise.all(replies);
    const summary = results.map((r) => ({ status: r.status, bytes: r.body.length, ps: /proxy-status: (.*)/i.exec(r.head)?.[1] }));
    // Clients of the killed worker see their connection cut (status 0 or a cut 200). Clients of the
    // surviving worker must get the object whole.
    for (const r of results) {
      if (r.status === 200) expect(r.body.equals(body.subarray(0, r.body.length))).toBe(true);
    }
    expect(summary.filter((r) => r.status === 502), JSON.stringify(summary)).toEqual([]);
    expect(results.filter((r) => r.status === 200 && r.body.length === N).length, JSON.stringify(summary)).toBeGreaterThan(0);
    expect(hits).toBeGreaterThanOrEqual(1);
  });
});
