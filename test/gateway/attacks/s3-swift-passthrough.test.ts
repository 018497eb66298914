// A write credential for kek-data/run42/ against Swift's S3 API: what the gateway forwards besides
// the checked key (other sub-resources in the query) must not let Swift act
// on names outside run42/.
//
// - s3api picks its controller by query parameter, `delete` before `uploads`/`uploadId`, and its
//   multi-delete is a bucket operation that drops the object name: POST run42/x?uploads&delete with
//   a <Delete> body is a DeleteObjects of the whole bucket, which the gateway routes as
//   CreateMultipartUpload of run42/x.
// - The same way a read credential asks bucket questions: GET run42/x?versioning is
//   GetBucketVersioning to s3api.

import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startSwift, swiftAvailable } from '../../helpers/swift.ts';
import { BUCKET, direct, type Rig, send, startRig } from './s3-harness.ts';

afterAll(runTeardowns);

const swift = await swiftAvailable();

describe.runIf(swift.ok)('s3 attack: Swift acts on names outside the scope (sub-resources riding on a write)', () => {
  let rig: Rig;
  let store: Awaited<ReturnType<typeof startSwift>>;
  beforeAll(async () => {
    store = await startSwift({ buckets: [BUCKET] });
    rig = await startRig(store);
  }, 90_000);

  it('POST run42/x?uploads&delete does not delete kek-data/secret', async () => {
    expect((await direct(store, 'PUT', `/${BUCKET}/secret-del`, 'SITE-SECRET')).status).toBe(200);
    const w = await rig.issue(`${BUCKET}/run42/`, true);
    const body = `<Delete><Object><Key>secret-del</Key></Object></Delete>`;
    const md5 = createHash('md5').update(body).digest('base64');
    const r = await send(rig.gw, w, 'POST', `/${BUCKET}/run42/x?uploads&delete`, { body, headers: { 'content-md5': md5 } });
    expect((await direct(store, 'GET', `/${BUCKET}/secret-del`)).body, `gateway answered ${r.status} ${r.body}`).toBe('SITE-SECRET');
  });

  it('POST run42/x?uploadId=1&delete does not delete kek-data/secret', async () => {
    expect((await direct(store, 'PUT', `/${BUCKET}/secret-del2`, 'SITE-SECRET')).status).toBe(200);
    const w = await rig.issue(`${BUCKET}/run42/`, true);
    const body = `<Delete><Object><Key>secret-del2</Key></Object></Delete>`;
    const md5 = createHash('md5').update(body).digest('base64');
    const r = await send(rig.gw, w, 'POST', `/${BUCKET}/run42/x?uploadId=1&delete`, { body, headers: { 'content-md5': md5 } });
    expect((await direct(store, 'GET', `/${BUCKET}/secret-del2`)).body, `gateway answered ${r.status} ${r.body}`).toBe('SITE-SECRET');
  });

  it('GET run42/x?versioning with a read credential does not answer with the bucket configuration', async () => {
    expect((await direct(store, 'PUT', `/${BUCKET}/run42/x`, 'IN')).status).toBe(200);
    const r = await rig.issue(`${BUCKET}/run42/`, false);
    // Not a read the gateway serves (docs: versionId, partNumber, response-*, ListParts); s3api
    // answers it as GetBucketVersioning, a bucket request.
    const got = await send(rig.gw, r, 'GET', `/${BUCKET}/run42/x?versioning`);
    expect(got.body).not.toContain('VersioningConfiguration');
  });
});
