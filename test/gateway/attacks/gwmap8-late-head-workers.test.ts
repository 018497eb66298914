// Attack: HEADs sent before a write or delete through the gateway and answered after it, with
// --workers 2: client HEADs and the gateway's own HEADs (a block read after --s3-revalidate),
// several at once so both workers hold one, then reads on fresh connections (both workers).
//
// docs/STAGING.md ("Replaced between two blocks"): "A HEAD answered after a write through the
// gateway (it was sent before) serves the request that sent it, and is not kept as the version
// later reads use"; ("Cache semantics for S3") "every read that starts after a write's 200 sees the
// new version"; with --workers N "the 200 is sent once every worker has dropped the object".
// Expected: every read that starts after the write's 200 (and after the held HEADs land) gets the
// new version (or 404 after a delete), whole and in ranges, in both workers.

import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { sleep } from './gateway-lib.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct, send } from './s3-harness.ts';

afterAll(runTeardowns);

const MiB = 2 ** 20;
const text = (n: number, seed: string) => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);
const close = { connection: 'close' };

/** A relay to `origin` that holds the answers of the next `n` HEADs for `holdMs` once armed. */
async function holdingRelay(origin: string): Promise<{ url: string; arm: (n: number, holdMs: number) => void; held: () => number }> {
  const to = new URL(origin);
  let left = 0;
  let hold = 0;
  let held = 0;
  const srv = http.createServer((req, res) => {
    const wait = (req.method === 'HEAD' || req.headers['if-none-match'] !== undefined) && left > 0 ? (left--, held++, hold) : 0;
    const up = http.request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (ur) => {
      setTimeout(() => {
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        ur.pipe(res);
      }, wait);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  onTeardown(() => new Promise<void>((r) => { srv.closeAllConnections(); srv.close(() => r()); }));
  return { url: `http://127.0.0.1:${(srv.address() as { port: number }).port}`, arm: (n, ms) => ((left = n), (hold = ms)), held: () => held };
}

describe('HEADs answered after a write, --workers 2', () => {
  for (const op of ['PUT', 'DELETE'] as const) {
    for (const who of ['client HEADs', 'the gateway\'s own HEADs'] as const) {
      for (const shape of ['ranges', 'whole'] as const) {
        // A whole cached object answers client HEADs itself; its own revalidations (GET with
        // If-None-Match after --s3-revalidate) are what is held there.
        if (shape === 'whole' && who === 'client HEADs') continue;
        it(`${who} (revalidations for whole) held over a ${op} do not bring the old ${shape} back`, async () => {
          const store = await startS3rver({ buckets: [BUCKET] });
          const relay = await holdingRelay(store.endpoint);
          const g = await startS3Gw({ ...store, endpoint: relay.url }, ['--s3-block-size', '1MiB', '--workers', '2', '--s3-revalidate', who === 'client HEADs' ? '60s' : '1s']);
          const cred = await g.issue(`${BUCKET}/run42/`, true);
          const key = `/${BUCKET}/run42/late-${op}-${who.length}-${shape}.bin`;
          const size = shape === 'ranges' ? 4 * MiB : 200_000;
          const v1 = text(size, 'version-1-old-bytes-');
          const v2 = text(size, 'VERSION-2-NEW-BYTES-');
          expect((await direct(store, 'PUT', key, v1)).status).toBe(200);
          const rd = (h: Record<string, string> = {}) => send(g.gw, cred, 'GET', key, { headers: { ...close, ...(shape === 'ranges' ? { range: 'bytes=0-99' } : {}), ...h } });
          const want1 = shape === 'ranges' ? v1.slice(0, 100) : v1;
          for (let i = 0; i < 6; i++) expect((await rd()).body).toBe(want1);
          if (who !== 'client HEADs') await sleep(1300);
          relay.arm(4, 1500);
          const heads = who === 'client HEADs'
            ? Array.from({ length: 4 }, () => send(g.gw, cred, 'HEAD', key, { headers: close }))
            : Array.from({ length: 4 }, (_, i) => send(g.gw, cred, 'GET', key, { headers: { ...close, ...(shape === 'ranges' ? { range: `bytes=${i * 10}-${i * 10 + 9}` } : {}) } }));
          await sleep(400);
          if (op === 'PUT') expect((await send(g.gw, cred, 'PUT', key, { body: v2, headers: close })).status).toBe(200);
          else expect((await send(g.gw, cred, 'DELETE', key, { headers: close })).status).toBe(204);
          await Promise.all(heads);
          const bad: string[] = [];
          for (let i = 0; i < 8; i++) {
            const r = await rd();
            const ok = op === 'PUT' ? r.body === (shape === 'ranges' ? v2.slice(0, 100) : v2) : r.status === 404;
            if (!ok) bad.push(`${r.status} ${r.body.startsWith('version-1') ? 'OLD bytes' : r.body.slice(0, 20)} (${String(r.headers['cache-status'])})`);
          }
          expect(relay.held()).toBeGreaterThan(0);
          expect(bad, bad.join('\n')).toEqual([]);
        }, 60_000);
      }
    }
  }
});
