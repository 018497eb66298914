// Attack: S3 GETs, answered from the store, from a mapped disk entry, or cut by their client in
// the middle of a mapped answer, as the operator sees them in --access-log and /metrics.
//
// docs/CACHING.md ("When upstreams fail"): "Every request, cut or not, is written to
// `--access-log` and counted in `estuary_gateway_requests_total` when its connection is done with
// it"; docs/CONFIGURATION.md: `--access-log` writes "one line per request" (only CONNECT tunnels
// are left out, docs/MIGRATING-FROM-SQUID.md); `estuary_gateway_s3_requests_total{method,
// status_class}` counts "requests answered by the S3 endpoint".
// Expected: three S3 GETs (miss, mapped hit, mapped hit cut by the client) give three access-log
// lines (TCP_MISS, TCP_HIT, TCP_HIT) and three more in both request counters.

import { readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { metric } from './disk-lib.ts';
import { sleep } from './gateway-lib.ts';
import { getObject, signedHeaders, startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct } from './s3-harness.ts';

afterAll(runTeardowns);

const MIB = 2 ** 20;
const KEY = `/${BUCKET}/run42/logged.bin`;

describe('S3 GETs in the access log and request counters', () => {
  it('a miss, a mapped hit and a cut mapped hit are each logged and counted', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const dir = join(store.dataDir, '..');
    const log = join(dir, `access-${process.pid}-${Date.now()}.log`);
    const g = await startS3Gw(store, ['--access-log', log]);
    const cred = await g.issue(`${BUCKET}/run42/`);
    expect((await direct(store, 'PUT', KEY, 'm'.repeat(16 * MIB))).status).toBe(200);
    const total0 = await metric(g.port, 'estuary_gateway_requests_total').catch(() => 0);
    const s3total0 = await metric(g.port, 'estuary_gateway_s3_requests_total').catch(() => 0);

    expect((await getObject(g.gw, cred, KEY)).complete).toBe(true);
    expect((await getObject(g.gw, cred, KEY)).complete).toBe(true);
    // A client that leaves after the first bytes of a mapped answer.
    await new Promise<void>((resolve, reject) => {
      const u = new URL(g.gw);
      const req = http.request({ host: u.hostname, port: u.port, path: KEY, headers: signedHeaders(g.gw, cred, 'GET', KEY), agent: false }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', () => resolve());
      req.on('timeout', reject);
      req.end();
    });
    await sleep(500);

    const lines = readFileSync(log, 'utf8').split('\n').filter((l) => l.includes('logged.bin'));
    const total = (await metric(g.port, 'estuary_gateway_requests_total').catch(() => 0)) - total0;
    const s3total = (await metric(g.port, 'estuary_gateway_s3_requests_total').catch(() => 0)) - s3total0;
    expect({ accessLogLines: lines.length, requestsTotal: total, s3RequestsTotal: s3total }).toEqual({ accessLogLines: 3, requestsTotal: 3, s3RequestsTotal: 3 });
  }, 40_000);
});
