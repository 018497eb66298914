// Attack: an S3 object deleted at the store, whose deletion the gateway learns from a HEAD.
//
// docs/STAGING.md ("Cache semantics for S3"): after --s3-revalidate "an object the store answers
// 404 for (deleted) is dropped". A GET's revalidation does drop it (gwmap4-s3-deleted-stale). A
// HEAD of a stale object is passed to the store (handler.ts #miss: `pass(..., 'uri-miss')`), and
// its 404 is relayed but the stored copy stays. rclone, s3fs and `aws s3 cp` send a HEAD before
// each read, so the HEAD is often the first to see the deletion. When the store then fails, the
// next GET serves the deleted object's bytes as stale-on-error (for --stale-if-error, 1 h).
// Expected: once the store has answered 404 for the key, the deleted bytes are never served again.

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { sleep } from './gateway-lib.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct, send } from './s3-harness.ts';

afterAll(runTeardowns);

const text = (n: number, seed: string) => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);
const KEY = `/${BUCKET}/run42/retracted-by-head.bin`;

describe('an S3 object whose deletion a HEAD saw', () => {
  // The GET rows held (gwmap4 fixed them for one worker; two workers hold too); the HEAD rows fail.
  for (const [method, workers] of [['HEAD', '1'], ['HEAD', '2'], ['GET', '2']]) {
    it(`is not served again once the store fails (404 seen by ${method}, --workers ${workers})`, async () => {
      const store = await startS3rver({ buckets: [BUCKET] });
      const g = await startS3Gw(store, ['--s3-revalidate', '1s', '--workers', workers]);
      const cred = await g.issue(`${BUCKET}/run42/`);
      const body = text(2 * 2 ** 20, 'retracted-dataset-seen-by-head-');
      expect((await direct(store, 'PUT', KEY, body)).status).toBe(200);
      for (let i = 0; i < 4; i++) expect((await send(g.gw, cred, 'GET', KEY)).body).toBe(body);
      expect((await direct(store, 'DELETE', KEY)).status).toBe(204);
      await sleep(1500);
      const heads: number[] = [];
      for (let i = 0; i < 4; i++) heads.push((await send(g.gw, cred, method, KEY)).status);
      expect(heads).toEqual([404, 404, 404, 404]);
      await store.kill();
      await sleep(500);
      const after: string[] = [];
      for (let i = 0; i < 4; i++) {
        const r = await send(g.gw, cred, 'GET', KEY);
        after.push(`${r.status}${r.body === body ? ' deleted bytes' : ''} (${String(r.headers['cache-status'])})`);
      }
      expect(after.filter((a) => a.includes('deleted bytes')), after.join(' | ')).toEqual([]);
    }, 60_000);
  }
});
