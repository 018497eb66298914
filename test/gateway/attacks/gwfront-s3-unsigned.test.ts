// Attack: an S3 object read (signed) into the gateway's memory tier, then asked for without any
// credential in every form a plain read can take: origin-form on the endpoint's bucket path,
// absolute-form with the cache's own s3:// key, and absolute-form at the store itself. The front
// reader answers plain reads from memory before any check of the full path runs, so none of them
// may reach the stored object: the S3 endpoint refuses the first, the proxy the others.

import { afterAll, describe, expect, it } from 'vitest';
import { issue } from '../../../gateway/s3/credentials.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { getHead, RawConnection } from '../helpers/raw-client.ts';
import { BUCKET, gatewayOn, ISSUER, signed } from '../helpers/s3-scope.ts';

afterAll(runTeardowns);

const SECRET = 'the object only signed readers may read';

describe('an S3 object in memory, asked for without credentials', () => {
  it('is never answered from memory, in any form of plain read', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const gw = await gatewayOn(store.endpoint, store);
    expect((await signed(store.endpoint, store, 'PUT', `/${BUCKET}/obj`, { body: SECRET })).status).toBe(200);
    const c = issue(ISSUER, [{ bucket: BUCKET, prefix: '', write: false }], 3_600_000, Date.now());
    const cred = { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey, sessionToken: c.sessionToken };
    for (let i = 0; i < 3; i++) {
      const r = await signed(gw.url, cred, 'GET', `/${BUCKET}/obj`);
      expect(r.body.toString()).toBe(SECRET);
    }
    const host = new URL(gw.url).host;
    const storeHost = new URL(store.endpoint).host;
    for (const [target, hostHeader] of [
      [`/${BUCKET}/obj`, host],
      [`s3://${BUCKET}/obj`, BUCKET],
      [`${store.endpoint}/${BUCKET}/obj`, storeHost],
    ] as const) {
      const conn = await RawConnection.open(gw.url);
      conn.write(getHead(target, hostHeader));
      const a = await conn.read();
      expect(a.body.toString(), `${target}: ${a.head}`).not.toContain(SECRET);
      expect(a.status, target).toBeGreaterThanOrEqual(400);
    }
    expect(gw.metrics.frontHit.value).toBe(0);
  }, 30_000);
});
