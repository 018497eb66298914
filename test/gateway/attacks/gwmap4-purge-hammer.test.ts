// Regression (holds today): purges of one S3 object racing fills and mapped hits of it in two workers, with the
// object replaced at the store before every purge.
//
// docs/CACHING.md (admin API): "With `--workers N` a purge is answered once every worker has
// dropped what it removed"; "A fetch still in flight at that moment is stored when it ends ...
// unless the purge removed an entry for its key: then, as after a write, it is not stored."
// Expected: a GET sent after a purge's answer (the store already holding version i) never gets a
// version older than i once the fetches in flight at the replacement have ended; every answer is one
// version whole, and no worker is restarted.

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { workers } from './disk-lib.ts';
import { adminPost, until } from './gwindex2-lib.ts';
import { getObject, startS3Gw, TOKEN } from './gwmap4-lib.ts';
import { BUCKET, direct } from './s3-harness.ts';

afterAll(runTeardowns);

const MIB = 2 ** 20;
const KEY = `/${BUCKET}/run42/hammer.bin`;
const version = (i: number) => `v${String(i).padStart(4, '0')}-`.repeat((2 * MIB) / 6);
const whichVersion = (b: Buffer) => {
  const s = b.toString('latin1');
  const head = s.slice(0, 6);
  return s === head.repeat(s.length / 6) && /^v\d{4}-$/.test(head) ? Number(head.slice(1, 5)) : -1;
};

function describe_(b: Buffer, cs: string): string {
  const s = b.toString('latin1');
  const head = s.slice(0, 6);
  let i = 0;
  while (i < s.length && s.slice(i, i + 6) === head) i += 6;
  return `${b.length} bytes, ${head} up to ${i}, then ${JSON.stringify(s.slice(i, i + 12))} (${cs})`;
}

describe('purges racing fills and mapped hits of one S3 object', async () => {
  const avail = await minioAvailable();
  // MinIO: s3rver rewrites an object's file in place, so a GET racing a PUT reads a short body
  // under a matching Content-Length (a bug of that test server, not of S3).
  it.skipIf(!avail.ok)('a GET after a purge answer never gets an older version', async () => {
    const store = await startMinio({ buckets: [BUCKET] });
    const g = await startS3Gw(store, ['--workers', '2']);
    const cred = await g.issue(`${BUCKET}/run42/`);
    expect((await direct(store, 'PUT', KEY, version(0))).status).toBe(200);
    const before = workers(g.child.pid).sort().join(',');
    let stop = false;
    const torn: string[] = [];
    const done = [0, 0, 0];
    const readers = done.map(async (_, n) => {
      while (!stop) {
        const r = await getObject(g.gw, cred, KEY).catch(() => undefined);
        if (r && r.complete && r.status === 200 && whichVersion(r.body) < 0) torn.push(describe_(r.body, String(r.headers['cache-status'])));
        done[n]!++;
      }
    });
    const stale: string[] = [];
    for (let i = 1; i <= 12; i++) {
      expect((await direct(store, 'PUT', KEY, version(i))).status).toBe(200);
      // Every read under way at the replacement (and the fetch it joined, of version i-1) has
      // ended once each reader has finished two more.
      const mark = [...done];
      expect(await until(() => done.every((d, n) => d >= mark[n]! + 2), 15_000)).toBe(true);
      const answer = (await adminPost(g.port, TOKEN, 'purge', { url: `s3://${BUCKET}/run42/hammer.bin` })) as { purged: number };
      for (let k = 0; k < 3; k++) {
        const r = await getObject(g.gw, cred, KEY);
        const v = whichVersion(r.body);
        if (r.complete && v !== i) stale.push(`round ${i}: got v${v} (${String(r.headers['cache-status'])}), purge said ${JSON.stringify(answer)}`);
      }
    }
    stop = true;
    await Promise.all(readers);
    expect({ stale, torn, workers: workers(g.child.pid).sort().join(',') }).toEqual({ stale: [], torn: [], workers: before });
  }, 60_000);
});
