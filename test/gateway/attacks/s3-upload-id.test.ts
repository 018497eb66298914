// A write credential for kek-data/run42/ must not write anything outside run42/, whatever the store
// does with the names it is given. s3rver keeps multipart parts as files at
// <bucket>/._S3rver_uploads/<uploadId>/<partNumber>: both come from the query, which the gateway
// forwards unchecked, so `uploadId=..` puts a "part" anywhere in the store (here: over the object
// kek-data/secret, and its MD5 file, since `${part}.md5` is the object's checksum file's name).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { BUCKET, direct, type Rig, send, startRig } from './s3-harness.ts';

afterAll(runTeardowns);

describe('s3 attack: UploadPart names outside the scope through uploadId / partNumber (s3rver)', () => {
  let rig: Rig;
  let store: Awaited<ReturnType<typeof startS3rver>>;
  beforeAll(async () => {
    store = await startS3rver({ buckets: [BUCKET] });
    rig = await startRig(store);
    expect((await direct(store, 'PUT', `/${BUCKET}/secret`, 'SITE-SECRET')).status).toBe(200);
  }, 60_000);

  it('uploadId=.. with partNumber naming another object does not reach the store', async () => {
    const w = await rig.issue(`${BUCKET}/run42/`, true);
    const r = await send(rig.gw, w, 'PUT', `/${BUCKET}/run42/x?partNumber=secret._S3rver_object&uploadId=..`, { body: 'OVERWRITTEN' });
    // Whatever the answer, the object outside the scope is untouched and the store never saw such a name.
    expect((await direct(store, 'GET', `/${BUCKET}/secret`)).body).toBe('SITE-SECRET');
    expect(rig.relay.seen.filter((s) => /uploadId=\.\.|uploadId=%2e%2e/i.test(s.path))).toEqual([]);
    expect([400, 403]).toContain(r.status); // InvalidArgument for a part number, AccessDenied for an id
  });

  it('uploadId with an encoded dot segment is refused too', async () => {
    const w = await rig.issue(`${BUCKET}/run42/`, true);
    const from = rig.relay.seen.length;
    const r = await send(rig.gw, w, 'PUT', `/${BUCKET}/run42/x?partNumber=1&uploadId=%2e%2e%2f%2e%2e%2fother`, { body: 'X' });
    expect(rig.relay.seen.slice(from).filter((s) => /uploadId=[^&]*(\.\.|%2e%2e)/i.test(s.path))).toEqual([]);
    expect([400, 403]).toContain(r.status); // InvalidArgument for a part number, AccessDenied for an id
  });

  it('CompleteMultipartUpload with uploadId=../victims does not delete the objects under victims/', async () => {
    for (const k of ['victims/a', 'victims/b']) expect((await direct(store, 'PUT', `/${BUCKET}/${k}`, 'VICTIM')).status).toBe(200);
    const w = await rig.issue(`${BUCKET}/run42/`, true);
    // s3rver's upload directory is <bucket>/._S3rver_uploads/<uploadId>: `..` reaches the bucket's
    // own directories. Parts named `key` and `metadata` make it look like an upload.
    const dir = encodeURIComponent('../victims');
    await send(rig.gw, w, 'PUT', `/${BUCKET}/run42/x?partNumber=key&uploadId=${dir}`, { body: 'run42/loot' });
    await send(rig.gw, w, 'PUT', `/${BUCKET}/run42/x?partNumber=metadata&uploadId=${dir}`, { body: '{}' });
    const part = await send(rig.gw, w, 'PUT', `/${BUCKET}/run42/x?partNumber=1&uploadId=${dir}`, { body: 'LOOT' });
    const etag = String(part.headers.etag ?? '');
    const body = `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>${etag}</ETag></Part></CompleteMultipartUpload>`;
    await send(rig.gw, w, 'POST', `/${BUCKET}/run42/x?uploadId=${dir}`, { body });
    expect((await direct(store, 'GET', `/${BUCKET}/victims/a`)).body).toBe('VICTIM');
    expect((await direct(store, 'GET', `/${BUCKET}/victims/b`)).body).toBe('VICTIM');
  });

  it('a partNumber with dot segments does not reach the store', async () => {
    expect((await direct(store, 'PUT', `/${BUCKET}/secret2`, 'SITE-SECRET')).status).toBe(200);
    const w = await rig.issue(`${BUCKET}/run42/`, true);
    const r = await send(rig.gw, w, 'PUT', `/${BUCKET}/run42/x?partNumber=${encodeURIComponent('../../secret2._S3rver_object')}&uploadId=u`, { body: 'OVERWRITTEN' });
    expect((await direct(store, 'GET', `/${BUCKET}/secret2`)).body).toBe('SITE-SECRET');
    expect([400, 403]).toContain(r.status); // InvalidArgument for a part number, AccessDenied for an id
  });
});
