// Attack: a purge of an S3 object while its revalidation (the store sends a new version, slowly)
// is in flight, with two workers. (Held.)
// docs/CACHING.md (admin API): "A fetch still in flight at that moment is stored when it ends ...
// unless the purge removed an entry for its key: then, as after a write, it is not stored."
// Expected: the revalidation's readers get their answer, nothing it fetched stays stored: the next
// read is not a hit.

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { adminPost } from './gwindex2-lib.ts';
import { sleep } from './gateway-lib.ts';
import { slowRelay, startS3Gw, TOKEN } from './gwmap4-lib.ts';
import { BUCKET, direct, send } from './s3-harness.ts';

afterAll(runTeardowns);

const MiB = 2 ** 20;
const text = (n: number, seed: string) => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);

describe('a purge racing a revalidation', () => {
  it('leaves nothing stored behind it (--workers 2)', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const relay = await slowRelay(store.endpoint, 2 * MiB);
    const g = await startS3Gw({ ...store, endpoint: relay.url }, ['--s3-revalidate', '1s', '--workers', '2']);
    const cred = await g.issue(`${BUCKET}/run42/`);
    const key = `/${BUCKET}/run42/racing.bin`;
    const v1 = text(2 * MiB, 'version-one-');
    const v2 = text(6 * MiB, 'version-two-');
    expect((await direct(store, 'PUT', key, v1)).status).toBe(200);
    expect((await send(g.gw, cred, 'GET', key)).body).toBe(v1);
    expect((await direct(store, 'PUT', key, v2)).status).toBe(200);
    await sleep(1500);
    const reading = send(g.gw, cred, 'GET', key);
    await sleep(800);
    const purged = (await adminPost(g.port, TOKEN, 'purge', { url: `s3://${BUCKET}/run42/racing.bin` })) as { purged: number };
    const r = await reading;
    expect(r.body === v2 || r.status >= 500).toBe(true);
    await sleep(300);
    const statuses: string[] = [];
    for (let i = 0; i < 4; i++) statuses.push(String((await send(g.gw, cred, 'GET', key)).headers['cache-status']));
    expect({ purged: purged.purged, firstAfter: statuses[0] }).toEqual({ purged: 1, firstAfter: expect.not.stringMatching(/hit/) });
  }, 60_000);
});
