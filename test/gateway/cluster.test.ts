// A gateway with two worker processes: they share one port, one disk cache and every fill.
// Concurrent misses spread over both workers still make one upstream fetch; an object stored by
// one worker is a hit in the other; purges and metrics cover all workers; SIGTERM stops them all.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { send } from './helpers/client.ts';
import { startGatewayProcess } from './helpers/gateway.ts';
import { fixed, slow, startOrigin } from './helpers/origin.ts';

function body(size: number, seed: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i + 4 <= size; i += 4) b.writeUInt32BE((i * 2654435761 + seed) >>> 0, i);
  return b;
}

describe('two workers', async () => {
  const origin = await startOrigin();
  const gw = await startGatewayProcess(['--workers', '2', '--allow-dest', '127.0.0.1', '--admin-token', 'cluster-admin-token']);

  it('collapses a herd spread over both workers into one upstream fetch, exact bytes for all', async () => {
    const big = body(6 * 2 ** 20, 1);
    const hex = createHash('sha1').update(big).digest('hex');
    const path = `/cvmfs/lhcb.cern.ch/data/${hex.slice(0, 2)}/${hex.slice(2)}`;
    origin.route(path, slow(big, 256 * 1024, 15, { 'cache-control': 'max-age=259200' }));
    const replies = await Promise.all(Array.from({ length: 40 }, () => send(gw.url, `${origin.url}${path}`)));
    expect(origin.count(path)).toBe(1);
    for (const r of replies) {
      expect(r.complete).toBe(true);
      expect(r.body.equals(big)).toBe(true);
    }
  });

  it('serves what one worker stored as a hit from the other', async () => {
    origin.route('/shared', fixed('shared object', { 'cache-control': 'max-age=60' }));
    const replies = [];
    for (let i = 0; i < 8; i++) replies.push(await send(gw.url, `${origin.url}/shared`));
    expect(origin.count('/shared')).toBe(1);
    expect(replies.filter((r) => /hit/.test(String(r.headers['cache-status']))).length).toBe(7);
  });

  it('purges in every worker and aggregates metrics over all of them', async () => {
    const purge = await send(gw.url, '/estuary/v1/admin/purge', {
      method: 'POST',
      headers: { authorization: 'Bearer cluster-admin-token', 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${origin.url}/shared` }),
    });
    expect(JSON.parse(purge.body.toString()).purged).toBe(1);
    for (let i = 0; i < 4; i++) await send(gw.url, `${origin.url}/shared`);
    expect(origin.count('/shared')).toBe(2);
    const text = (await send(gw.url, '/metrics')).body.toString();
    const total = [
      ...text.matchAll(/^estuary_gateway_requests_total\{method="GET",status_class="2xx"\} (\d+)/gm),
    ];
    expect(Number(total[0]?.[1])).toBe(40 + 8 + 4);
    expect(text).toMatch(/^estuary_gateway_cache_misses_total 3$/m);
    // Every herd request but the first joined a fill, in its own worker or through the other one.
    expect(text).toMatch(/^estuary_gateway_collapsed_requests_total 39$/m);
    expect(text).toMatch(/^estuary_gateway_cache_objects\{tier="disk"\} 2$/m);
    // The guards against a silent primary or leader are backstops: the herd never needed them.
    expect(text).toMatch(/^estuary_gateway_cluster_guard_fired_total\{guard="follow"\} 0$/m);
    expect(text).toMatch(/^estuary_gateway_cluster_guard_fired_total\{guard="claim"\} 0$/m);
    expect(text).toMatch(/^estuary_gateway_worker_restarts_total 0$/m);
  });

  it('replaces a worker killed with SIGKILL and keeps serving', async () => {
    const children = await childrenOf(gw.child.pid);
    expect(children.length).toBe(2);
    process.kill(Number(children[0]), 'SIGKILL');
    await gw.child.waitFor(/starting a new one/, 10_000);
    for (let i = 0; i < 6; i++) expect((await send(gw.url, `${origin.url}/shared`)).status).toBe(200);
    // Whichever worker died, the shared disk is still reported exactly once.
    const text = (await send(gw.url, '/metrics')).body.toString();
    expect(text).toMatch(/^estuary_gateway_cache_objects\{tier="disk"\} 2$/m);
  });

  it('stops every worker on SIGTERM and exits 0', async () => {
    expect(await gw.child.stop('SIGTERM', 15_000)).toBe(0);
  });
});

describe('SIGTERM while a replacement worker is still starting', () => {
  it('stops the replacement too and exits 0', async () => {
    const gw = await startGatewayProcess(['--workers', '2', '--allow-dest', '127.0.0.1']);
    const [victim] = await childrenOf(gw.child.pid);
    process.kill(Number(victim), 'SIGKILL');
    await gw.child.waitFor(/starting a new one/, 10_000);
    expect(await gw.child.stop('SIGTERM', 15_000)).toBe(0);
  });
});

async function childrenOf(pid: number | undefined): Promise<string[]> {
  return (await readdir('/proc'))
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]!.split(' ')[1] === String(pid);
      } catch {
        return false;
      }
    });
}
