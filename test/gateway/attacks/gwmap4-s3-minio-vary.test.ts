// Attack: the AWS SDK for JavaScript v3 and boto3 (awscli's library) reading the same object
// through the gateway in front of MinIO.
//
// MinIO answers every GetObject with `Vary: Origin, Accept-Encoding`; boto3 (urllib3) sends
// `Accept-Encoding: identity`, the SDK in Node sends none. The gateway keys S3 objects by that
// Vary, so the second client's read is a miss: the object crosses the link twice and is stored
// twice (and each further client flavour, or browser Origin, adds a copy).
// Expected: an S3 object is one cache entry, `s3://NAME/KEY` (docs/STAGING.md, "Cache semantics
// for S3": "Objects are cached under `s3://NAME/KEY`"; the store is asked for the object, whose
// bytes do not depend on Origin or Accept-Encoding); the second client's read is a hit and the
// store sees one GET. docs/STAGING.md promises the same for block reads ("so awscli, boto3 and the
// SDK reading the same object cost one copy over the link"), which already holds.

import { execFile } from 'node:child_process';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startCountingProxy } from '../../helpers/counting-proxy.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET } from './s3-harness.ts';

afterAll(runTeardowns);

const KEY = 'run42/shared.bin';
const BODY = Buffer.from('one-copy-over-the-link/'.repeat(91_181));

describe('SDK v3 and boto3 reading one object through the gateway in front of MinIO', async () => {
  const avail = await minioAvailable();
  it.skipIf(!avail.ok)('cost one GET at the store', async () => {
    const store = await startMinio({ buckets: [BUCKET] });
    const relay = await startCountingProxy(store.endpoint);
    const g = await startS3Gw({ ...store, endpoint: relay.url });
    const cred = await g.issue(`${BUCKET}/run42/`);
    const site = new S3Client({ endpoint: store.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey } });
    await site.send(new PutObjectCommand({ Bucket: BUCKET, Key: KEY, Body: BODY }));

    const via = new S3Client({ endpoint: g.gw, region: 'us-east-1', forcePathStyle: true, credentials: cred });
    const r = await via.send(new GetObjectCommand({ Bucket: BUCKET, Key: KEY }));
    expect(Buffer.from(await r.Body!.transformToByteArray()).equals(BODY)).toBe(true);

    const py = await new Promise<string>((resolve) => {
      execFile('python3', ['-c', [
        'import os, boto3',
        "s3 = boto3.client('s3', endpoint_url=os.environ['GW'], config=boto3.session.Config(s3={'addressing_style': 'path'}))",
        `r = s3.get_object(Bucket='${BUCKET}', Key='${KEY}')`,
        "b = r['Body'].read()",
        "print(len(b), r['ResponseMetadata']['HTTPHeaders'].get('cache-status'))",
      ].join('\n')], {
        env: { ...process.env, GW: g.gw, AWS_ACCESS_KEY_ID: cred.accessKeyId, AWS_SECRET_ACCESS_KEY: cred.secretAccessKey, AWS_SESSION_TOKEN: cred.sessionToken, AWS_DEFAULT_REGION: 'us-east-1', AWS_CONFIG_FILE: '/dev/null', AWS_SHARED_CREDENTIALS_FILE: '/dev/null' },
        timeout: 30_000,
      }, (_err, stdout, stderr) => resolve(`${stdout}${stderr}`));
    });
    expect(py).toContain(String(BODY.length));
    const gets = relay.count('GET', `/${BUCKET}/${KEY}`).length;
    expect({ storeGets: gets, boto3: py.trim().split('\n').pop() }).toEqual({ storeGets: 1, boto3: expect.stringMatching(/hit/) });
  }, 40_000);
});
