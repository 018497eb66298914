// The disk tier's index lives in memory in every worker. A client that fills the cache with empty
// bodies under long URLs must not make that index grow past what --disk-cache allows, and the
// index's memory is shown on the status page and in /metrics (docs/CACHING.md, "What the disk tier
// costs in memory").

import { describe, expect, it } from 'vitest';
import { send } from './helpers/client.ts';
import { startGatewayProcess } from './helpers/gateway.ts';
import { fixed, startOrigin } from './helpers/origin.ts';

const MiB = 1024 * 1024;

function gauge(text: string, name: string, labels = ''): number {
  const m = new RegExp(`^${name}${labels.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text);
  if (!m) throw new Error(`${name}${labels} not in /metrics`);
  return Number(m[1]);
}

describe('the disk index under many long URLs', async () => {
  const origin = await startOrigin();
  origin.route('/empty', fixed('', { 'cache-control': 'max-age=600' }));
  const diskCache = 4 * MiB;
  const gw = await startGatewayProcess([
    '--workers', '2',
    '--allow-dest', '127.0.0.1',
    '--disk-cache', String(diskCache),
    '--mem-cache', String(MiB),
  ]);

  it('stays within a quarter of --disk-cache per worker, and /metrics and the page say how much', async () => {
    const long = 'q'.repeat(15 * 1024);
    for (let i = 0; i < 300; i += 10) {
      const replies = await Promise.all(
        Array.from({ length: 10 }, (_, j) => send(gw.url, `${origin.url}/empty?${long}${i + j}`)),
      );
      for (const r of replies) expect(r.status).toBe(200);
    }
    const text = (await send(gw.url, '/metrics')).body.toString();
    const objects = gauge(text, 'estuary_gateway_cache_objects', '{tier="disk"}');
    const index = gauge(text, 'estuary_gateway_disk_index_bytes');
    // Each entry holds about 31 KiB of index in each worker: the 4 MiB bound keeps some 30 of the
    // 300, where counting bodies alone kept every one (about 9 MiB of index per worker).
    expect(objects).toBeGreaterThan(0);
    expect(objects).toBeLessThanOrEqual(40);
    expect(index).toBeLessThanOrEqual((2 * diskCache) / 4);
    expect(index).toBeGreaterThan(objects * 30 * 1024);
    const page = (await send(gw.url, '/estuary/v1/status')).body.toString();
    expect(page).toMatch(/the index holds [\d.]+ [KM]i?B of memory/);
  });
});
