// Attack: `estuary_gateway_disk_mapped_bytes` while stalled clients still write from mappings of
// entries that were purged.
//
// docs/CACHING.md ("Disk hits from the page cache"): a mapping is "unmapped once the last answer
// writing from it has closed"; "`estuary_gateway_disk_mapped_bytes` is the address space held".
// Expected: while clients that stopped reading keep answers of a purged 16 MiB object open, the
// worker still maps that body (it shows in /proc/PID/maps), so the metric still counts it. Today it
// drops to 0 at the purge (MappedBodies.drop subtracts at once), and such mappings also stop
// counting against the 2 GiB the worker keeps mapped: the gauge says nothing is held while any
// number of bodies stay mapped for stalled clients.

import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { metric, workers } from './disk-lib.ts';
import { sleep } from './gateway-lib.ts';
import { adminPost } from './gwindex2-lib.ts';
import { getObject, heldUnder, signedHeaders, startS3Gw, TOKEN } from './gwmap4-lib.ts';
import { BUCKET, direct } from './s3-harness.ts';

afterAll(runTeardowns);

const MIB16 = 16 * 2 ** 20;
const KEY = `/${BUCKET}/run42/stalled.bin`;

describe('the mapped-bytes gauge with stalled clients of a purged object', () => {
  it('counts the mapping the stalled answers still hold', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const g = await startS3Gw(store, ['--workers', '1']);
    const cred = await g.issue(`${BUCKET}/run42/`);
    expect((await direct(store, 'PUT', KEY, 's'.repeat(MIB16))).status).toBe(200);
    expect((await getObject(g.gw, cred, KEY)).complete).toBe(true);
    const [worker] = workers(g.child.pid);
    const u = new URL(g.gw);
    const stalled: http.ClientRequest[] = [];
    await Promise.all(
      Array.from({ length: 4 }, () =>
        new Promise<void>((resolve, reject) => {
          const req = http.request({ host: u.hostname, port: u.port, path: KEY, headers: signedHeaders(g.gw, cred, 'GET', KEY), agent: false }, (res) => {
            res.once('data', () => {
              res.pause();
              resolve();
            });
          });
          req.on('error', reject);
          stalled.push(req);
          req.end();
        }),
      ),
    );
    const held = await metric(g.port, 'estuary_gateway_disk_mapped_bytes');
    expect(held).toBeGreaterThan(MIB16 - 4096);
    expect(await adminPost(g.port, TOKEN, 'purge', { url: `s3://${BUCKET}/run42/stalled.bin` })).toEqual({ purged: 1 });
    await sleep(300);
    // Still mapped: the stalled answers write from it.
    expect(heldUnder(worker!, g.cacheDir).maps.length).toBeGreaterThan(0);
    const after = await metric(g.port, 'estuary_gateway_disk_mapped_bytes');
    for (const r of stalled) r.destroy();
    expect(after, 'gauge while the purged body is still mapped for 4 stalled answers').toBeGreaterThan(MIB16 - 4096);
  }, 30_000);
});
