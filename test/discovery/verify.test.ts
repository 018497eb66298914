// Verification through real forwarding proxies: a cache is advertised only after a test fetch
// through it passes, is tested again periodically, and one that failed is retried (Shoal never
// retried) and advertised once it works.

import { describe, expect, it } from 'vitest';
import { nextCheckDelay } from '../../discovery/verifier.ts';
import { rabbitmqAvailable } from '../helpers/rabbitmq.ts';
import { heartbeat } from './fixtures.ts';
import {
  eventually,
  getJson,
  rawPublisher,
  startFakeCache,
  startOrigin,
  startTestDiscovery,
  uniqueExchange,
} from './net.ts';

const rabbit = await rabbitmqAvailable();

describe('retry schedule', () => {
  it('doubles from the base per failure, capped at the recheck interval', () => {
    expect(nextCheckDelay(0, 600_000, 30_000)).toBe(600_000);
    expect([1, 2, 3, 4, 5, 6].map((f) => nextCheckDelay(f, 600_000, 30_000))).toEqual([
      30_000, 60_000, 120_000, 240_000, 480_000, 600_000,
    ]);
  });
});

describe.runIf(rabbit.ok)('verification through the cache', () => {
  it('advertises only verified caches, retries failed ones and re-verifies good ones', async () => {
    const exchange = uniqueExchange();
    const origin = await startOrigin();
    const good = await startFakeCache();
    const denied = await startFakeCache();
    denied.mode = 'denied';
    const broken = await startFakeCache();
    broken.mode = 'broken';
    const d = await startTestDiscovery({
      exchange,
      verify: true,
      testUrl: origin.testUrl,
      retryBaseMs: 300,
      recheckMs: 1500,
    });
    const publish = await rawPublisher(exchange);
    const hb = (id: string, port: number) =>
      heartbeat({ uuid: id, hostname: `${id}.test`, cache_port: port, public_ip: '127.0.0.1' });
    await publish(hb('good', good.port));
    await publish(hb('denied', denied.port));
    await publish(hb('broken', broken.port));
    await eventually(
      () => [...d.registry.values()].map((e) => `${e.id}:${e.verification.state}`).sort(),
      (s) => s.join() === 'broken:failed,denied:failed,good:ok',
    );
    const names = async (path: string) =>
      Object.values(
        (await getJson<Record<string, { hostname: string }> | null>(`${d.url}${path}`)) ?? {},
      ).map((e) => e.hostname);
    expect(await names('/nearest')).toEqual(['good.test']);
    expect((await names('/all')).sort()).toEqual(['broken.test', 'denied.test', 'good.test']);
    expect(d.registry.get('denied')!.verification.error).toMatch(/denied/);
    // Fixed caches are retried and advertised.
    denied.mode = 'ok';
    await eventually(
      () => names('/nearest'),
      (n) => n.includes('denied.test'),
      10_000,
    );
    // A verified cache is tested again: the proxy sees a second test fetch after recheckMs.
    const before = good.proxied();
    await eventually(
      () => good.proxied(),
      (n) => n > before,
      10_000,
    );
    // One that breaks after passing drops out at its next check.
    good.mode = 'broken';
    await eventually(
      () => names('/nearest'),
      (n) => !n.includes('good.test'),
      10_000,
    );
    expect(d.registry.get('broken')!.verification.failures).toBeGreaterThan(1);
  });
});
