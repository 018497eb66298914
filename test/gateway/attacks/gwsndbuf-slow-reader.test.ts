// Attack: clients that stop reading while the gateway writes to them through the smallest send
// buffer (64KiB, the smallest). Relayed misses (no-store) and disk hits are left half-sent for longer than
// --idle-timeout (1 s here, which is about the upstream pausing, not the client). Meanwhile: other
// clients must still be answered promptly, the gateway's memory must not grow by the bodies it
// owes (it must stop reading the upstream / the disk, not buffer), and when the stalled clients
// read again each must get its whole body, byte for byte (the gateway's own pause of the upstream
// is not an upstream pause, so --idle-timeout must not cut them).

import { readFileSync, readdirSync } from 'node:fs';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startGatewayProcess } from '../helpers/gateway.ts';
import { startOrigin } from '../helpers/origin.ts';
import { get, noise, open, readAnswers, sendBufferOf, sha } from './gwsndbuf-lib.ts';

const BODY = noise(4 * 2 ** 20 + 17, 21);
const SMALL = noise(64 * 1024, 22);
const STALLED = 24;

/** Resident memory (bytes) of `pid` and its descendants. */
function rssTree(pid: number): number {
  const kids = new Map<number, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      kids.set(ppid, [...(kids.get(ppid) ?? []), Number(d)]);
    } catch {
      // gone
    }
  }
  let total = 0;
  const walk = (p: number) => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      total += m ? Number(m[1]) * 1024 : 0;
    } catch {
      // gone
    }
    for (const k of kids.get(p) ?? []) walk(k);
  };
  walk(pid);
  return total;
}

describe('stalled readers behind a 64KiB send buffer', () => {
  it('others are served, memory stays bounded, --idle-timeout does not cut them, bodies are exact', async () => {
    const origin = await startOrigin();
    origin.route('/nostore', (_req, res) => {
      res.writeHead(200, { 'cache-control': 'no-store', 'content-length': BODY.length });
      res.end(BODY);
    });
    origin.route('/disk', (_req, res) => {
      res.writeHead(200, { 'cache-control': 'max-age=3600', 'content-length': BODY.length });
      res.end(BODY);
    });
    origin.route('/small', (_req, res) => {
      res.writeHead(200, { 'cache-control': 'max-age=3600', 'content-length': SMALL.length });
      res.end(SMALL);
    });
    const gw = await startGatewayProcess(['--upstream', `o=${origin.url}`, '--send-buffer', '64KiB', '--idle-timeout', '1s']);
    try {
      const port = Number(new URL(gw.url).port);
      const warm = await open(port);
      warm.write(get('/disk') + get('/small'));
      await readAnswers(warm, 2);
      warm.destroy();
      await new Promise((r) => setTimeout(r, 300));
      const before = rssTree(gw.child.pid);

      // stalled clients: they send their request and read nothing
      const stalled: { s: Socket; path: string }[] = [];
      for (let i = 0; i < STALLED; i++) {
        const path = i % 2 ? '/nostore' : '/disk';
        const s = await open(port);
        s.pause();
        s.write(get(path));
        stalled.push({ s, path });
      }
      await new Promise((r) => setTimeout(r, 1500));
      expect(sendBufferOf(port, stalled[0]!.s.localPort!)).toBe(131072);

      // others are answered promptly meanwhile
      for (let i = 0; i < 5; i++) {
        const t0 = Date.now();
        const c = await open(port);
        c.write(get('/small'));
        const [a] = await readAnswers(c, 1);
        c.destroy();
        expect(sha(a!.body)).toBe(sha(SMALL));
        expect(Date.now() - t0).toBeLessThan(1000);
      }
      await new Promise((r) => setTimeout(r, 1500));
      const during = rssTree(gw.child.pid);
      // owing 24 x 4 MiB; buffering them would be ~100 MiB more
      expect({ grewMiB: Math.round((during - before) / 2 ** 20) }).toEqual({
        grewMiB: expect.toSatisfy((n: number) => n < 40),
      });

      // now read: every body whole and exact (stalled 3 s > --idle-timeout 1s)
      const got = await Promise.all(
        stalled.map(async ({ s, path }) => {
          const p = readAnswers(s, 1);
          s.resume();
          const [a] = await p;
          s.destroy();
          return { path, status: a!.status, len: a!.body.length, sha: sha(a!.body) };
        }),
      );
      for (const g of got) expect(g).toEqual({ path: g.path, status: 200, len: BODY.length, sha: sha(BODY) });
    } finally {
      await gw.child.stop();
    }
  }, 30_000);
});
