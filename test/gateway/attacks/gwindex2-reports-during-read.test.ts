// Attack: what the gateway reports about its cache while a replacement worker still reads the
// index of a cache holding 30,001 entries. The entries are all on disk and are served as soon as
// the read reaches them, yet every report counts only what the read has put in the index so far:
// zero.
//
// Expected:
// - /estuary/v1/summary "tells what the site caches" (docs/CACHING.md, "Metrics, summary, admin";
//   the agent puts it in heartbeats, and discovery ranks caches by it): it must not advertise an
//   empty cache for the seconds of the read; it counts what is on disk, or says the index is still
//   being read.
// - The status page says "first, in words, whatever is wrong ... or one line saying it serves
//   well" (docs/CACHING.md, "Status page"): while it shows a disk tier of 0 objects it must say the
//   index is still being read, not that all is well with an empty cache.
// - /metrics estuary_gateway_cache_objects{tier="disk"} and the admin API's /stats disk.objects:
//   "objects held in the cache" (lib/metric-names.ts) — 30,001, not 0; a dashboard sees the cache
//   emptied and refilled on every worker crash otherwise.
// - The admin API's holdings, which the coordinator asks to place jobs where their inputs are
//   (docs/COORDINATOR.md): a site holding every input must not answer that it holds none.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { get } from './disk-lib.ts';
import { startGateway } from './gateway-lib.ts';
import { adminPost, killWorker, pathOrigin, seedCache } from './gwindex2-lib.ts';

afterAll(runTeardowns);

const N = 30_000;
const TOKEN = 'attack-token-0123456789';

let summary: { cache: { objects: number; diskBytes: number } };
let page = '';
let metrics = '';
let stats: { disk: { objects: number } };
let readStillRunning = false;
let heldBefore = -1;
let heldDuring = -1;
type Holdings = { holdings: { objects: number }[] };
const HOLDINGS = { urls: ['reverse://o/o/'] };

beforeAll(async () => {
  const dir = await tempDir('gwi2-rep-');
  const o = await pathOrigin();
  await seedCache(dir, o, N);
  const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${o.port}`, '--cache-dir', dir, '--admin-token', TOKEN]);
  heldBefore = ((await adminPost(gw.port, TOKEN, 'holdings', HOLDINGS)) as Holdings).holdings[0]!.objects;
  await killWorker(gw);
  // Holdings are asked with the others but may wait for the read (as a purge does), so the proof
  // below is taken before their answer is awaited.
  const holdings = adminPost(gw.port, TOKEN, 'holdings', HOLDINGS);
  holdings.catch(() => undefined); // a failure is reported where it is awaited, below
  const [s, p, m, a] = await Promise.all([
    get(gw.port, '/estuary/v1/summary'),
    get(gw.port, '/estuary/v1/status'),
    get(gw.port, '/metrics'),
    get(gw.port, '/estuary/v1/admin/stats', { authorization: `Bearer ${TOKEN}` }),
  ]);
  summary = JSON.parse(s.body.toString()) as typeof summary;
  page = p.body.toString();
  metrics = m.body.toString();
  stats = JSON.parse(a.body.toString()) as typeof stats;
  // Proof the reports above were taken during the read: a stored object is served from disk.
  const late = await get(gw.port, `/o/${N - 1}`);
  readStillRunning = !String(late.headers['cache-status']).includes('; hit');
  heldDuring = ((await holdings) as Holdings).holdings[0]!.objects;
}, 60_000);

describe('reports while a replacement worker reads its index', () => {
  it('the reports were taken while the index was still being read', () => {
    expect(readStillRunning || summary.cache.objects === 0).toBe(true);
  });

  it('/estuary/v1/summary does not advertise an empty cache', () => {
    expect(summary.cache.objects).toBe(N + 1);
  });

  it('the status page says the index is still being read (or shows the objects)', () => {
    const showsObjects = page.includes('30,001') || page.includes('30001');
    const saysReading = /index[^<]{0,60}(being read|reading|loading)|reading[^<]{0,40}index/i.test(page);
    expect(showsObjects || saysReading).toBe(true);
  });

  it('/metrics and admin stats count the objects on disk', () => {
    const line = metrics.split('\n').find((l) => l.startsWith('estuary_gateway_cache_objects{tier="disk"}'));
    expect(Number(line?.split(' ').pop())).toBe(N + 1);
    expect(stats.disk.objects).toBe(N + 1);
  });

  it('admin holdings (what the coordinator places jobs by) still count the stored inputs', () => {
    expect(heldBefore).toBe(N);
    expect(heldDuring).toBe(N);
  });
});
