// Regression (holds today): kill -9 of the gateway worker while it writes a mapped S3 answer (16 MiB, the largest
// mapped body) to a client that stopped reading, then of the whole gateway the same way followed
// by a restart on the same cache dir.
//
// Expected (docs/STAGING.md, "Cache semantics for S3": a gateway killed in the middle of a download
// "cuts its clients (they see an incomplete body, never a short object that looks whole)";
// docs/CACHING.md, "Disk hits from the page cache"): the client's answer is cut short of its
// Content-Length; the primary starts a new worker, which answers the right bytes from the same
// entry, holds exactly one mapping of it while serving and no descriptor afterwards, and
// `estuary_gateway_disk_mapped_bytes` counts only the new worker's mapping.

import { createHash } from 'node:crypto';
import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { metric, workers } from './disk-lib.ts';
import { sleep, startGateway } from './gateway-lib.ts';
import { until } from './gwindex2-lib.ts';
import { getObject, heldUnder, signedHeaders, startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct } from './s3-harness.ts';

afterAll(runTeardowns);

const MIB16 = 16 * 2 ** 20;
const KEY = `/${BUCKET}/run42/big.bin`;
const md5 = (b: Buffer | string) => createHash('md5').update(b).digest('hex');
const text = (n: number, seed: string) => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);

describe('kill -9 in the middle of a mapped S3 answer', () => {
  it('a killed worker cuts its client; its replacement serves right bytes with one mapping and no leak', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const g = await startS3Gw(store, ['--workers', '1']);
    const cred = await g.issue(`${BUCKET}/run42/`);
    const body = text(MIB16, 'kill-nine-mapped-');
    expect((await direct(store, 'PUT', KEY, body)).status).toBe(200);
    expect((await getObject(g.gw, cred, KEY)).body.toString()).toBe(body);
    const hit = await getObject(g.gw, cred, KEY);
    expect(hit.complete && md5(hit.body) === md5(body)).toBe(true);
    expect(await metric(g.port, 'estuary_gateway_disk_mapped_bytes')).toBeGreaterThan(0);
    const [worker] = workers(g.child.pid);
    expect(worker).toBeDefined();
    const cut = await getObject(g.gw, cred, KEY, async () => {
      await sleep(300);
      process.kill(worker!, 'SIGKILL');
      await sleep(300);
    });
    expect(cut.status).toBe(200);
    expect(cut.complete).toBe(false);
    expect(cut.body.length).toBeLessThan(MIB16);
    // What arrived is a prefix of the object, never other bytes.
    expect(cut.body.equals(Buffer.from(body).subarray(0, cut.body.length))).toBe(true);

    expect(await until(() => workers(g.child.pid).some((p) => p !== worker), 20_000)).toBe(true);
    const fresh = workers(g.child.pid).find((p) => p !== worker)!;
    // Only the new worker's mappings count: none yet (nothing asked of it).
    expect(await until(async () => (await metric(g.port, 'estuary_gateway_disk_mapped_bytes').catch(() => -1)) === 0, 10_000)).toBe(true);
    for (let i = 0; i < 3; i++) {
      const again = await getObject(g.gw, cred, KEY);
      expect(again.complete).toBe(true);
      expect(md5(again.body)).toBe(md5(body));
    }
    const mapped = await metric(g.port, 'estuary_gateway_disk_mapped_bytes');
    expect(mapped).toBeGreaterThan(MIB16 - 4096);
    expect(mapped).toBeLessThanOrEqual(MIB16);
    await sleep(200);
    const held = heldUnder(fresh, g.cacheDir);
    expect(held.fds.filter((f) => !/lock|index/.test(f))).toEqual([]);
    expect(held.maps.length).toBeLessThanOrEqual(1);
  }, 60_000);

  it('a killed gateway cuts its client; restarted on the same cache dir it serves the right bytes', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const g = await startS3Gw(store);
    const cred = await g.issue(`${BUCKET}/run42/`);
    const body = text(MIB16, 'whole-gateway-kill-');
    expect((await direct(store, 'PUT', KEY, body)).status).toBe(200);
    expect((await getObject(g.gw, cred, KEY)).complete).toBe(true);
    expect((await getObject(g.gw, cred, KEY)).complete).toBe(true);
    const cut = await getObject(g.gw, cred, KEY, async () => {
      await sleep(300);
      await g.child.stop('SIGKILL');
    });
    expect(cut.complete).toBe(false);
    expect(cut.body.equals(Buffer.from(body).subarray(0, cut.body.length))).toBe(true);
    const again = await startGateway(g.args, g.port);
    for (let i = 0; i < 2; i++) {
      const r = await getObject(g.gw, cred, KEY);
      expect(r.complete).toBe(true);
      expect(md5(r.body)).toBe(md5(body));
      expect(String(r.headers['cache-status'])).toMatch(/hit/);
    }
    expect(await metric(again.port, 'estuary_gateway_disk_mapped_bytes')).toBeGreaterThan(0);
  }, 60_000);

  it('clients that leave in the middle of mapped answers leave no descriptor or extra mapping behind', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const g = await startS3Gw(store, ['--workers', '1']);
    const cred = await g.issue(`${BUCKET}/run42/`);
    const body = text(MIB16, 'leave-early-');
    expect((await direct(store, 'PUT', KEY, body)).status).toBe(200);
    expect((await getObject(g.gw, cred, KEY)).complete).toBe(true);
    const [worker] = workers(g.child.pid);
    const u = new URL(g.gw);
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        new Promise<void>((resolve) => {
          const req = http.request({ host: u.hostname, port: u.port, path: KEY, headers: signedHeaders(g.gw, cred, 'GET', KEY), agent: false }, (res) => {
            res.once('data', () => {
              // Half reset at once, half after the socket backed up.
              setTimeout(() => {
                req.destroy();
                resolve();
              }, i % 2 ? 0 : 300);
              res.pause();
            });
          });
          req.on('error', () => resolve());
          req.end();
        }),
      ),
    );
    expect(await until(() => heldUnder(worker!, g.cacheDir).fds.filter((f) => !/lock|index/.test(f)).length === 0, 5000), JSON.stringify(heldUnder(worker!, g.cacheDir))).toBe(true);
    expect(heldUnder(worker!, g.cacheDir).maps.length).toBeLessThanOrEqual(1);
    expect(await metric(g.port, 'estuary_gateway_disk_mapped_bytes')).toBeLessThanOrEqual(MIB16);
    const again = await getObject(g.gw, cred, KEY);
    expect(again.complete && md5(again.body) === md5(body)).toBe(true);
  }, 40_000);
});
