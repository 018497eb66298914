// Memory per distinct origin in forward mode: 20,000 origins asked once each (loopback addresses
// 127.x.y.z on a closed port, so every one is refused at once). Nothing may be kept per origin —
// no upstream pool, no growth of the live heap beyond the bounded target cache — and an idle
// gateway gives the burst's heap back. The RSS of a real process is measured by
// scripts/origin-memory.ts (docs/CACHING.md, "Memory").

import v8 from 'node:v8';
import vm from 'node:vm';
import { Agent, request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startMemoryReclaim } from '../../gateway/memory-reclaim.ts';
import { onTeardown } from '../helpers/cleanup.ts';
import { startTestGateway } from './helpers/gateway.ts';

const ORIGINS = 20_000;
const MiB = 2 ** 20;

/** The i-th origin: 127.x.y.z, never 127.0.0.1, on the discard port nothing listens on. */
function origin(i: number): string {
  const n = i + 256;
  return `http://127.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}:9`;
}

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

function liveHeap(): number {
  gc();
  return v8.getHeapStatistics().used_heap_size;
}

describe('memory per distinct origin', () => {
  it('keeps no pool and no live heap per origin, and gives the heap back when idle', { timeout: 120_000 }, async () => {
    const gw = await startTestGateway();
    // Keep-alive connections to the gateway: the cost measured is the origins', not the clients'.
    const client = new Agent({ keepAlive: true, maxSockets: 32 });
    onTeardown(() => client.destroy());
    const port = Number(new URL(gw.url).port);
    const ask = (i: number) =>
      new Promise<{ status: number; proxyStatus: string }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: `${origin(i)}/x`, agent: client }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, proxyStatus: String(res.headers['proxy-status']) }));
        });
        req.on('error', reject);
        req.end();
      });
    /** Asks origins [from, to) with 32 clients at once; every answer must be the refusal. */
    const askAll = async (from: number, to: number) => {
      let next = from;
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          while (next < to) {
            const r = await ask(next++);
            if (r.status !== 502 || !r.proxyStatus.includes('connection_refused'))
              throw new Error(`unexpected answer ${r.status} ${r.proxyStatus}`);
          }
        }),
      );
    };
    // The first half fills what is bounded by design (the 10,000-entry target cache) and compiles
    // what is compiled once; the second half may then add nothing that stays.
    await askAll(0, ORIGINS / 2);
    const half = liveHeap();
    await askAll(ORIGINS / 2, ORIGINS);
    const grownPerOrigin = (liveHeap() - half) / (ORIGINS / 2);
    // A pool or a cache entry kept per origin costs kilobytes (about 4 KB each was seen when
    // memory grew per origin); what V8 allocates and has not yet compacted varies with load by
    // tens of bytes per origin.
    expect(grownPerOrigin).toBeLessThan(256);

    // Structural: the upstream agent holds no pool for an origin it is done with.
    expect(gw.upstreams.pools).toBe(0);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/^estuary_gateway_upstream_pools 0$/m);
    expect(metrics).toMatch(/^estuary_gateway_memory_reclaims_total 0$/m);
    // Idle: the check the gateway runs every 10 s returns what the burst left committed.
    const reclaim = startMemoryReclaim(() => gw.metrics.activity(), { idleMs: 0, checkMs: 3_600_000 });
    onTeardown(() => reclaim.stop());
    const burst = v8.getHeapStatistics();
    // The burst leaves V8 holding far more than it uses (131 MiB measured), else this proves nothing.
    expect((burst.total_heap_size - burst.used_heap_size) / MiB).toBeGreaterThan(32);
    reclaim.check();
    const h = v8.getHeapStatistics();
    expect((h.total_heap_size - h.used_heap_size) / MiB).toBeLessThan(32);
  });
});
