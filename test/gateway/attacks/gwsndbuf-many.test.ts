// Attack: many connections at once, auto against off: 2,000 idle keep-alive connections (each has
// had one small answer) plus 50 connections loading an 8 MiB disk hit at the same time. Nothing may
// fail (every idle connection still open and answering afterwards, every body byte-exact), every
// loading connection under auto must show tb 1048576, and the kernel's TCP memory
// (/proc/net/sockstat "mem", pages) and the gateway's RSS are recorded for both settings.
// auto exists to keep the kernel's share small, so at its peak it must not use more than off.

import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startGatewayProcess } from '../helpers/gateway.ts';
import { startOrigin } from '../helpers/origin.ts';
import { get, NEAR_TB, noise, open, readAnswers, sendBufferOf, sha } from './gwsndbuf-lib.ts';

const BIG = noise(8 * 2 ** 20, 51);
const BIG_SHA = sha(BIG);
const IDLE = 2000;
const LOADERS = 50;

const tcpMemPages = () => Number(/TCP:.* mem (\d+)/.exec(readFileSync('/proc/net/sockstat', 'utf8'))![1]);
const rss = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

/** GET path, hashing the body as it streams; resolves with the sha and the gateway-side tb seen mid-body. */
function load(port: number, path: string): Promise<{ sha: string; len: number; tb: number }> {
  return new Promise((resolve, reject) => {
    void open(port).then((s: Socket) => {
      s.write(get(path));
      let head = Buffer.alloc(0);
      let need = -1;
      let got = 0;
      let tb = -1;
      const h = createHash('sha256');
      s.on('data', (d: Buffer) => {
        if (need < 0) {
          head = Buffer.concat([head, d]);
          const i = head.indexOf('\r\n\r\n');
          if (i < 0) return;
          need = Number(/content-length: *(\d+)/i.exec(head.subarray(0, i).toString('latin1'))![1]);
          d = head.subarray(i + 4);
        }
        if (tb < 0 && got > 2 ** 20) tb = sendBufferOf(port, s.localPort!);
        h.update(d);
        got += d.length;
        if (got >= need) {
          s.destroy();
          resolve({ sha: h.digest('hex'), len: got, tb });
        }
      });
      s.on('error', reject);
    }, reject);
  });
}

async function run(sendBuffer: string) {
  const origin = await startOrigin();
  origin.route('/big', (_req, res) => {
    res.writeHead(200, { 'cache-control': 'max-age=3600', 'content-length': BIG.length });
    res.end(BIG);
  });
  origin.route('/tiny', (_req, res) => {
    res.writeHead(200, { 'cache-control': 'max-age=3600', 'content-length': 2 });
    res.end('ok');
  });
  const gw = await startGatewayProcess(['--upstream', `o=${origin.url}`, '--send-buffer', sendBuffer]);
  const port = Number(new URL(gw.url).port);
  const idle: Socket[] = [];
  try {
    const warm = await open(port);
    warm.write(get('/big') + get('/tiny'));
    await readAnswers(warm, 2);
    warm.destroy();
    for (let b = 0; b < IDLE; b += 200) {
      const batch = await Promise.all(
        Array.from({ length: 200 }, async () => {
          const s = await open(port);
          s.write(get('/tiny'));
          const [a] = await readAnswers(s, 1);
          expect(a!.status).toBe(200);
          return s;
        }),
      );
      idle.push(...batch);
    }
    const memIdle = tcpMemPages();
    const rssIdle = rss(gw.child.pid);
    let memPeak = 0;
    let rssPeak = 0;
    const sampler = setInterval(() => {
      memPeak = Math.max(memPeak, tcpMemPages());
      rssPeak = Math.max(rssPeak, rss(gw.child.pid));
    }, 10);
    const results = await Promise.all(Array.from({ length: LOADERS }, () => load(port, '/big')));
    clearInterval(sampler);
    for (const r of results) expect({ sha: r.sha, len: r.len }).toEqual({ sha: BIG_SHA, len: BIG.length });
    // every idle connection is still there and still answers
    const again = await Promise.all(
      idle.map(async (s) => {
        s.write(get('/tiny'));
        const [a] = await readAnswers(s, 1);
        return a!.status;
      }),
    );
    expect(again.filter((st) => st !== 200)).toEqual([]);
    const stats = { memIdlePages: memIdle, memPeakPages: memPeak, rssIdleMiB: rssIdle >> 20, rssPeakMiB: rssPeak >> 20, tbs: [...new Set(results.map((r) => r.tb))] };
    return stats;
  } finally {
    for (const s of idle) s.destroy();
    await gw.child.stop();
  }
}

describe('2,000 idle + 50 loading connections', () => {
  const seen: Record<string, Awaited<ReturnType<typeof run>>> = {};
  it('auto: nothing fails, loaders get tb 1048576', async () => {
    seen.auto = await run('auto');
    expect(seen.auto.tbs).toEqual([NEAR_TB]);
  }, 30_000);

  it('off: nothing fails', async () => {
    seen.off = await run('off');
    expect(seen.off.tbs).not.toContain(NEAR_TB);
  }, 30_000);

  it("auto's peak kernel TCP memory is no more than off's", () => {
    expect(seen.auto && seen.off).toBeTruthy();
    expect(seen.auto!.memPeakPages - seen.auto!.memIdlePages).toBeLessThanOrEqual(1.1 * (seen.off!.memPeakPages - seen.off!.memIdlePages) + 256);
  });
});
