// Attack: an S3 object held only as range blocks, deleted at the store, whose deletion a client's
// HEAD through the gateway sees.
//
// docs/STAGING.md ("Cache semantics for S3"): "an object the store answers 404 for (deleted), to a
// GET or to a client's HEAD, is dropped in every worker"; ("Which version") the version a block read
// trusts comes from a HEAD, "a write or delete through the gateway forgets it at once".
// The review commit e3536c9 announces a HEAD's 404 to the other workers only when the whole-object
// key is stored here (`d.cache.lookup(target.key)`, pass.ts). An object read only in ranges is held
// as blocks under other keys, so that check is false and the other workers keep the version they
// trust and serve the deleted bytes for up to --s3-revalidate.
// Expected: after the HEAD's 404 (or a DELETE through the gateway), every range read on any
// connection, in any worker, gets 404.

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct, send } from './s3-harness.ts';

afterAll(runTeardowns);

const text = (n: number, seed: string) => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);
const close = { connection: 'close' };

describe('an S3 object held as blocks, deleted', () => {
  for (const [how, workers] of [['client HEAD 404', '1'], ['client HEAD 404', '2'], ['DELETE through the gateway', '2']] as const) {
    it(`is not served in ranges after a ${how} (--workers ${workers})`, async () => {
      const store = await startS3rver({ buckets: [BUCKET] });
      const g = await startS3Gw(store, ['--s3-revalidate', '60s', '--s3-block-size', '1MiB', '--workers', workers]);
      const cred = await g.issue(`${BUCKET}/run42/`, true);
      const key = `/${BUCKET}/run42/blocks-then-deleted-${workers}-${how.length}.bin`;
      const body = text(4 * 2 ** 20, 'deleted-block-bytes-');
      expect((await direct(store, 'PUT', key, body)).status).toBe(200);
      // Every worker reads a range: blocks stored, the version (from a HEAD) trusted for 60 s.
      const warm = await Promise.all(Array.from({ length: 8 }, () => send(g.gw, cred, 'GET', key, { headers: { ...close, range: 'bytes=0-99' } })));
      expect(warm.map((r) => r.status)).toEqual(Array(8).fill(206));
      expect(warm[0]!.body).toBe(body.slice(0, 100));
      if (how === 'client HEAD 404') {
        expect((await direct(store, 'DELETE', key)).status).toBe(204);
        const h = await send(g.gw, cred, 'HEAD', key, { headers: close });
        expect(h.status).toBe(404);
      } else {
        expect((await send(g.gw, cred, 'DELETE', key, { headers: close })).status).toBe(204);
      }
      const after: string[] = [];
      for (let i = 0; i < 8; i++) {
        const r = await send(g.gw, cred, 'GET', key, { headers: { ...close, range: 'bytes=0-99' } });
        after.push(`${r.status}${r.body === body.slice(0, 100) ? ' deleted bytes' : ''} (${String(r.headers['cache-status'])})`);
      }
      expect(after.filter((a) => !a.startsWith('404')), after.join(' | ')).toEqual([]);
    }, 60_000);
  }
});
