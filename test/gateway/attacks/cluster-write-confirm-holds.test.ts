// Regression (holds today): a write sent right after the other worker of `--workers 2` was killed
// (kill -9) is answered at once, and the replacement worker does not serve the replaced version.
// docs/CACHING.md, Unsafe methods: "a read sent after the answer, on any connection, never gets
// the replaced version"; a worker that is gone does not hold a write.

import { afterAll, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { clusterGateway, connsOnWorkers, waitWorkers, workerPids } from './cluster-lib.ts';
import { versionedOrigin } from './confirm-lib.ts';
import { sleep } from './gateway-lib.ts';

afterAll(runTeardowns);

it('a write right after the other worker is killed is answered at once and holds on its replacement', async () => {
  const o = await versionedOrigin();
  o.objects.set('/d', 'old');
  const gw = await clusterGateway(o.url, 2);
  const pids = await waitWorkers(gw.child.pid, 2);
  const conns = await connsOnWorkers(gw.port, pids);
  for (const c of conns.values()) expect((await c.request('GET', '/d')).body.toString()).toBe('old');
  const [alive, victim] = pids as [number, number];
  process.kill(victim, 'SIGKILL');
  await sleep(50);
  const t0 = Date.now();
  const w = await conns.get(alive)!.request('PUT', '/d', {}, 'new', 10_000);
  expect(w.status).toBe(204);
  expect(Date.now() - t0).toBeLessThan(2000);
  const now = await waitWorkers(gw.child.pid, 2, [victim]);
  expect(workerPids(gw.child.pid)).not.toContain(victim);
  for (const c of (await connsOnWorkers(gw.port, now)).values()) {
    expect((await c.request('GET', '/d')).body.toString()).toBe('new');
  }
}, 30_000);
