// Regression (holds today): kill -9 of the worker fetching an S3 object from a slow store while a client of another
// worker waits on that same fetch (fills are shared across workers, docs/CONFIGURATION.md
// `--workers`: "they share the port, the disk cache and each fill").
//
// Expected (docs/STAGING.md, "Cache semantics for S3": a gateway killed in the middle of a
// download "cuts its clients (they see an incomplete body, never a short object that looks whole)
// and keeps nothing partial"): the killed worker's client is cut; the other worker's client is
// answered, whole (it fetches again) or cut, within a few seconds, never left waiting; afterwards
// the object is served whole and right.

import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { workers } from './disk-lib.ts';
import { pidsOnPort, sleep } from './gateway-lib.ts';
import { until } from './gwindex2-lib.ts';
import { type Body, getObject, slowRelay, startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct } from './s3-harness.ts';

afterAll(runTeardowns);

const MIB = 2 ** 20;
const KEY = `/${BUCKET}/run42/slow.bin`;
const md5 = (b: Buffer | string) => createHash('md5').update(b).digest('hex');

describe('kill -9 of the worker that leads a shared S3 fill', () => {
  it('the waiting client of the other worker is answered, and the object is whole afterwards', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const body = 'slow-store-object-'.repeat((4 * MIB) / 18 + 1).slice(0, 4 * MIB);
    expect((await direct(store, 'PUT', KEY, body)).status).toBe(200);
    const relay = await slowRelay(store.endpoint, 3 * MIB);
    const g = await startS3Gw({ ...store, endpoint: relay.url }, ['--workers', '2']);
    const cred = await g.issue(`${BUCKET}/run42/`);
    expect(await until(() => workers(g.child.pid).length === 2, 20_000)).toBe(true);
    const relayPort = Number(new URL(relay.url).port);

    const ended: Record<string, number> = {};
    const started = Date.now();
    const track = (name: string, p: Promise<Body>) => p.then((r) => ((ended[name] = Date.now() - started), r));
    // Two connections in a row: the primary hands them to different workers.
    const answers = [0, 1, 2, 3].map((i) => track(`c${i}`, getObject(g.gw, cred, KEY)));
    await sleep(500);
    const leaders = pidsOnPort(relayPort, 'peer').filter((p) => workers(g.child.pid).includes(p));
    expect(leaders.length).toBeGreaterThan(0);
    process.kill(leaders[0]!, 'SIGKILL');
    const t = Date.now();
    const results = await Promise.race([
      Promise.all(answers),
      sleep(20_000).then(() => undefined),
    ]);
    expect(results, `clients still waiting 20 s after the kill: ${JSON.stringify(ended)}`).toBeDefined();
    for (const r of results!) {
      // Whole and right, or visibly cut: never short and looking complete.
      if (r.complete) expect(md5(r.body)).toBe(md5(body));
      else expect(r.body.equals(Buffer.from(body).subarray(0, r.body.length))).toBe(true);
    }
    const waited = Math.max(...Object.values(ended)) - (t - started);
    expect(waited).toBeLessThan(15_000);
    const after = await getObject(g.gw, cred, KEY);
    expect(after.complete).toBe(true);
    expect(md5(after.body)).toBe(md5(body));
  }, 60_000);
});
