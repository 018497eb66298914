// Attack: two `--s3` names served from one store bucket (`--s3 kek-data=URL --s3 alias=URL/kek-data`).
// A write through one name, then reads through the other.
//
// docs/STAGING.md: "`http://host:port/OTHER` when the store calls the bucket `OTHER`"; ("Cache
// semantics for S3") "writes through the gateway drop the entry at once ... so every read that
// starts after a write's `200` sees the new version" and "No other client's writes, however many,
// weaken this for yours". Objects are cached under s3://NAME/KEY, so a write through `alias`
// must still drop what `kek-data` holds of the same store object (whole and blocks).
// Expected: after a PUT or DELETE through one name is answered, reads through the other name
// see the new version (or 404), whole and in ranges, with --workers 1 and 2.

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct, send } from './s3-harness.ts';

afterAll(runTeardowns);

const text = (n: number, seed: string) => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);
const close = { connection: 'close' };

describe('two --s3 names for one store bucket', () => {
  for (const workers of ['1', '2']) {
    for (const op of ['PUT', 'DELETE'] as const) {
      it(`a ${op} through one name is seen through the other (--workers ${workers})`, async () => {
        const store = await startS3rver({ buckets: [BUCKET] });
        const g = await startS3Gw(store, ['--s3-revalidate', '300s', '--s3-block-size', '1MiB', '--workers', workers, '--s3', `alias=${store.endpoint}/${BUCKET}`]);
        const cred = await g.issue(`${BUCKET}/run42/,alias/run42/`, true);
        const k = `run42/two-names-${op}-${workers}`;
        const small = `/${BUCKET}/${k}.txt`;
        const big = `/${BUCKET}/${k}.bin`;
        const v1 = text(4 << 20, 'version-one-');
        expect((await direct(store, 'PUT', small, 'old small')).status).toBe(200);
        expect((await direct(store, 'PUT', big, v1)).status).toBe(200);
        // Fill through `kek-data` in every worker: whole small object, range blocks of the big one.
        for (let i = 0; i < 6; i++) {
          expect((await send(g.gw, cred, 'GET', small, { headers: close })).body).toBe('old small');
          expect((await send(g.gw, cred, 'GET', big, { headers: { ...close, range: 'bytes=0-99' } })).status).toBe(206);
        }
        // Write through `alias`.
        const v2 = text(4 << 20, 'VERSION-TWO-');
        if (op === 'PUT') {
          expect((await send(g.gw, cred, 'PUT', `/alias/${k}.txt`, { body: 'new small', headers: close })).status).toBe(200);
          expect((await send(g.gw, cred, 'PUT', `/alias/${k}.bin`, { body: v2, headers: close })).status).toBe(200);
        } else {
          expect((await send(g.gw, cred, 'DELETE', `/alias/${k}.txt`, { headers: close })).status).toBe(204);
          expect((await send(g.gw, cred, 'DELETE', `/alias/${k}.bin`, { headers: close })).status).toBe(204);
        }
        const bad: string[] = [];
        for (let i = 0; i < 6; i++) {
          const s = await send(g.gw, cred, 'GET', small, { headers: close });
          const b = await send(g.gw, cred, 'GET', big, { headers: { ...close, range: 'bytes=0-99' } });
          if (op === 'PUT') {
            if (s.body !== 'new small') bad.push(`whole: ${s.status} ${JSON.stringify(s.body.slice(0, 20))} (${String(s.headers['cache-status'])})`);
            if (b.body !== v2.slice(0, 100)) bad.push(`range: ${b.status} ${JSON.stringify(b.body.slice(0, 20))} (${String(b.headers['cache-status'])})`);
          } else {
            if (s.status !== 404) bad.push(`whole: ${s.status} ${JSON.stringify(s.body.slice(0, 20))} (${String(s.headers['cache-status'])})`);
            if (b.status !== 404) bad.push(`range: ${b.status} ${JSON.stringify(b.body.slice(0, 20))} (${String(b.headers['cache-status'])})`);
          }
        }
        expect(bad, bad.join('\n')).toEqual([]);
      }, 60_000);
    }
  }
});
