// Every current S3 client must work unchanged inside its scope. awscli (botocore) sends
// `Content-Length: 0` on a DeleteObject, and HTTP allows it on any request without a body; the
// gateway signs the header it was given for the store, but the request that reaches the store
// lacks it, so Swift (which checks signed headers as AWS does) answers SignatureDoesNotMatch:
// `aws s3 rm`, `aws s3 mv`, `aws s3 sync --delete` and `aws s3api delete-object` all fail through
// the gateway, as does an uncached GET (a versionId read, or any miss) carrying the header.

import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startSwift, swiftAvailable } from '../../helpers/swift.ts';
import { BUCKET, direct, type Rig, send, startRig } from './s3-harness.ts';

afterAll(runTeardowns);

const swift = await swiftAvailable();

function aws(gw: string, cred: { accessKeyId: string; secretAccessKey: string; sessionToken: string }, ...args: string[]): Promise<{ rc: number; err: string }> {
  const env = {
    ...process.env,
    AWS_ACCESS_KEY_ID: cred.accessKeyId,
    AWS_SECRET_ACCESS_KEY: cred.secretAccessKey,
    AWS_SESSION_TOKEN: cred.sessionToken,
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_CONFIG_FILE: '/dev/null',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
  };
  return new Promise((resolve) => {
    execFile('aws', ['--endpoint-url', gw, ...args], { env, timeout: 60_000 }, (err, _out, stderr) => {
      resolve({ rc: err ? Number((err as { code?: number }).code ?? 1) : 0, err: stderr });
    });
  });
}

describe.runIf(swift.ok)('s3 attack: requests with Content-Length: 0 through the gateway to Swift', () => {
  let rig: Rig;
  let store: Awaited<ReturnType<typeof startSwift>>;
  beforeAll(async () => {
    store = await startSwift({ buckets: [BUCKET] });
    rig = await startRig(store);
  }, 90_000);

  it('aws s3api delete-object deletes an object inside the scope', async () => {
    expect((await direct(store, 'PUT', `/${BUCKET}/run42/gone`, 'x')).status).toBe(200);
    const w = await rig.issue(`${BUCKET}/run42/`, true);
    const r = await aws(rig.gw, w, 's3api', 'delete-object', '--bucket', BUCKET, '--key', 'run42/gone');
    expect(r.err).toBe('');
    expect(r.rc).toBe(0);
    expect((await direct(store, 'HEAD', `/${BUCKET}/run42/gone`)).status).toBe(404);
  }, 60_000);

  it('a DeleteObject with Content-Length: 0 is signed as sent', async () => {
    expect((await direct(store, 'PUT', `/${BUCKET}/run42/gone2`, 'x')).status).toBe(200);
    const w = await rig.issue(`${BUCKET}/run42/`, true);
    const r = await send(rig.gw, w, 'DELETE', `/${BUCKET}/run42/gone2`, { headers: { 'content-length': '0' } });
    expect(r.body).not.toContain('SignatureDoesNotMatch');
    expect(r.status).toBe(204);
  });

  it('an uncached GET with Content-Length: 0 is served', async () => {
    expect((await direct(store, 'PUT', `/${BUCKET}/run42/read`, 'IN')).status).toBe(200);
    const r = await rig.issue(`${BUCKET}/run42/`, false);
    const got = await send(rig.gw, r, 'GET', `/${BUCKET}/run42/read`, { headers: { 'content-length': '0' } });
    expect(got.status).toBe(200);
    expect(got.body).toBe('IN');
  });
});
