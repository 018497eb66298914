// Attack: clients that ask for a 16 MiB object answered from a mapping and hang up after its
// first bytes, against `estuary_gateway_bytes_sent_total`.
//
// A mapped answer counts the whole body as sent when it starts writing (hit.ts serveMapped:
// `opts.onBytes(meta.size)` before `res.write`), whatever the client takes; an answer read from
// disk counts slice by slice. So each client that leaves early adds 16 MiB it never received, and
// a few hundred such requests make the counter (dashboards, egress accounting) report gigabytes
// that never left the machine.
// Expected: `estuary_gateway_bytes_sent_total` counts bytes sent to clients (docs/CACHING.md,
// "Metrics"; the access log's bytes are "those sent to the client"): 20 answers cut after their
// first bytes add far less than 20 × 16 MiB; here at most what the loopback socket buffers could
// have taken, 8 MiB per answer.

import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { metric } from './disk-lib.ts';
import { sleep } from './gateway-lib.ts';
import { getObject, signedHeaders, startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct } from './s3-harness.ts';

afterAll(runTeardowns);

const MIB = 2 ** 20;
const KEY = `/${BUCKET}/run42/counted.bin`;

describe('bytes_sent_total and mapped answers cut by their clients', () => {
  it('does not count bytes the clients never got', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const g = await startS3Gw(store);
    const cred = await g.issue(`${BUCKET}/run42/`);
    expect((await direct(store, 'PUT', KEY, 'c'.repeat(16 * MIB))).status).toBe(200);
    expect((await getObject(g.gw, cred, KEY)).complete).toBe(true);
    expect((await getObject(g.gw, cred, KEY)).complete).toBe(true);
    const before = await metric(g.port, 'estuary_gateway_bytes_sent_total');
    const u = new URL(g.gw);
    let received = 0;
    for (let i = 0; i < 20; i++) {
      await new Promise<void>((resolve) => {
        const req = http.request({ host: u.hostname, port: u.port, path: KEY, headers: signedHeaders(g.gw, cred, 'GET', KEY), agent: false }, (res) => {
          res.once('data', (d: Buffer) => {
            received += d.length;
            req.destroy();
            resolve();
          });
        });
        req.on('error', () => resolve());
        req.end();
      });
    }
    await sleep(500);
    const counted = (await metric(g.port, 'estuary_gateway_bytes_sent_total')) - before;
    expect(counted, `counted ${Math.round(counted / MIB)} MiB for 20 answers cut after ${received} bytes received in all`).toBeLessThan(20 * 8 * MIB);
  }, 30_000);
});
