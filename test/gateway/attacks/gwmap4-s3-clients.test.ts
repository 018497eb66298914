// Regression (holds today): the real clients read an object answered from a mapping of its disk
// entry, with their default settings (checksum validation on: the AWS SDK for JavaScript v3,
// botocore/boto3 and awscli send `x-amz-checksum-mode: ENABLED` and check x-amz-checksum-* of a
// whole-object answer). MinIO stores the CRC32 the SDK sent with the upload, so a mapped answer
// must carry the store's checksum and ETag with its bytes unchanged (docs/STAGING.md, "What is
// served"; docs/CACHING.md, "Disk hits from the page cache").

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable, type MinioServer, startMinio } from '../../helpers/minio.ts';
import { metric } from './disk-lib.ts';
import { type S3Gw, startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, type Cred } from './s3-harness.ts';

afterAll(runTeardowns);

const MIB = 2 ** 20;
const KEY = 'run42/clients.bin';
const BODY = Buffer.from('mapped-for-real-clients/'.repeat((12 * MIB) / 24));
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

function run(cmd: string, args: string[], cred: Cred, g: S3Gw): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, {
      env: { ...process.env, AWS_ACCESS_KEY_ID: cred.accessKeyId, AWS_SECRET_ACCESS_KEY: cred.secretAccessKey, AWS_SESSION_TOKEN: cred.sessionToken, AWS_DEFAULT_REGION: 'us-east-1', AWS_CONFIG_FILE: '/dev/null', AWS_SHARED_CREDENTIALS_FILE: '/dev/null', GW: g.gw },
      timeout: 30_000,
    }, (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` }));
  });
}

describe('real clients reading a mapped S3 object', async () => {
  const avail = await minioAvailable();
  let store: MinioServer;
  let g: S3Gw;
  let cred: Cred;
  beforeAll(async () => {
    if (!avail.ok) return;
    store = await startMinio({ buckets: [BUCKET] });
    g = await startS3Gw(store);
    cred = await g.issue(`${BUCKET}/run42/`);
    const site = new S3Client({ endpoint: store.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey } });
    const put = await site.send(new PutObjectCommand({ Bucket: BUCKET, Key: KEY, Body: BODY }));
    expect(put.ChecksumCRC32).toBeDefined();
  }, 60_000);

  it.skipIf(!avail.ok)('the SDK v3 (default checksum validation), boto3 and awscli get the right bytes', async () => {
    const via = new S3Client({ endpoint: g.gw, region: 'us-east-1', forcePathStyle: true, credentials: cred });
    for (let i = 0; i < 3; i++) {
      const r = await via.send(new GetObjectCommand({ Bucket: BUCKET, Key: KEY }));
      const b = Buffer.from(await r.Body!.transformToByteArray());
      expect(md5(b)).toBe(md5(BODY));
      if (i > 0) expect(r.ChecksumCRC32).toBeDefined();
    }
    expect(await metric(g.port, 'estuary_gateway_disk_mapped_bytes')).toBeGreaterThan(0);
    const py = await run('python3', ['-c', [
      'import os, boto3, hashlib',
      "s3 = boto3.client('s3', endpoint_url=os.environ['GW'], config=boto3.session.Config(s3={'addressing_style': 'path'}))",
      `r = s3.get_object(Bucket='${BUCKET}', Key='${KEY}', ChecksumMode='ENABLED')`,
      "print(hashlib.md5(r['Body'].read()).hexdigest(), r.get('ChecksumCRC32'))",
    ].join('\n')], cred, g);
    expect(py.out).toContain(md5(BODY));
    const out = join(g.dir, 'cli.bin');
    const cli = await run('aws', ['--endpoint-url', g.gw, 's3', 'cp', `s3://${BUCKET}/${KEY}`, out], cred, g);
    expect(cli.code, cli.out).toBe(0);
    expect(md5(readFileSync(out))).toBe(md5(BODY));
  }, 60_000);
});
