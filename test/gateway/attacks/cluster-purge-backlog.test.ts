// Attack: one admin purge of a prefix with --workers 2. A purge sends the other workers ONE
// invalidation message holding every key under the prefix (cache.ts purgePrefix -> invalidateAll
// -> coordinator.invalidated). The primary's outbox (gateway/cluster/outbox.ts) counts a message's
// bytes against the 8 MiB a worker may leave unread and, past it, takes the worker as stuck and
// kills it (kill -9). A cache with ~100,000 CVMFS objects (keys of ~90 bytes) or, as here, 800
// objects with 12 KB URLs is over 8 MiB of keys, so a healthy, idle worker is killed by a purge,
// its clients' connections are cut, and each such purge counts toward the crash loop (5 deaths
// in a minute end the gateway: docs/CACHING.md "Limits worth knowing").
//
// Expected (docs/CACHING.md, outbox): only "a worker that has stopped reading" its channel is
// ended; a purge is answered after every worker dropped the keys, and no worker that reads its
// channel is restarted for it.
//
// The cache is seeded on disk (the gateway's own entry format, copied from an entry it stored),
// so the test does not spend half a minute fetching 800 objects.

import { afterAll, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { clusterGateway, Conn, tempDir, waitWorkers, workerPids } from './cluster-lib.ts';
import { seedEntries, versionedOrigin } from './confirm-lib.ts';
import { sleep } from './gateway-lib.ts';

afterAll(runTeardowns);

it('a purge of a large prefix kills no healthy worker', async () => {
  const o = await versionedOrigin();
  const long = 'x'.repeat(12_000);
  const N = 800;
  for (let i = 0; i < N; i++) o.objects.set(`/big/${i}/${long}`, `o${i}`);
  const token = 'a'.repeat(32);
  const cacheDir = tempDir();
  await seedEntries(o, cacheDir, N, (i) => `/big/${i}/${long}`);

  const gw = await clusterGateway(o.url, 2, ['--admin-token', token], cacheDir);
  const before = await waitWorkers(gw.child.pid, 2);
  // The seeded entries are served from the cache (the origin is not asked).
  const c = await Conn.open(gw.port);
  const gets = o.gets;
  const hit = await c.request('GET', `/big/7/${long}`);
  expect(hit.body.toString()).toBe('o7');
  expect(o.gets).toBe(gets);

  const r = await c.request(
    'POST',
    '/estuary/v1/admin/purge',
    { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    JSON.stringify({ prefix: '/big/' }),
    30_000,
  );
  expect(r.status).toBe(200);
  expect(JSON.parse(r.body.toString())).toEqual({ purged: N });
  await sleep(500);
  const log = gw.child.output();
  expect(log).not.toMatch(/stopped reading its channel/);
  expect(workerPids(gw.child.pid).sort()).toEqual([...before].sort());
  // And the purge did what it says on every worker: the next read goes to the origin.
  const after = await Conn.open(gw.port);
  const g = await after.request('GET', `/big/7/${long}`);
  expect(g.body.toString()).toBe('o7');
  expect(o.gets).toBeGreaterThan(gets);
}, 60_000);
