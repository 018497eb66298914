// The WAN copy of an object happens once, whatever the clients: awscli 2 reads a large object in
// ranges, then boto3's download_file reads it again with If-Match on every range; both are served
// from the same aligned blocks, so the store sends the object's bytes exactly once (counted at a
// relay in front of it).

import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { startCountingProxy } from '../helpers/counting-proxy.ts';
import { startS3rver } from '../helpers/s3rver.ts';
import { tempDir } from '../helpers/tmp.ts';
import { awscli, awscliAvailable, boto3, boto3Python, BUCKET, creds, gatewayFor } from './helpers/s3-clients.ts';

const MiB = 1024 * 1024;
// Over s3transfer's 8 MiB multipart threshold, so both tools split the download into ranges.
const SIZE = 20 * MiB + 12345;
const python = await boto3Python();
const hasAwscli = awscliAvailable();

describe.runIf(python && hasAwscli)('one WAN copy for awscli and boto3 downloads', async () => {
  const store = await startS3rver({ buckets: [BUCKET] });
  const relay = await startCountingProxy(store.endpoint);
  const keys = { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey, region: store.region };
  const gw = await gatewayFor(relay.url, { keys, s3BlockSize: String(4 * MiB) });
  const job = creds([{ bucket: BUCKET, prefix: 'run42/', write: false }]);

  it('fetches the object once: ranges with If-Match on the known version use the blocks', async () => {
    const data = randomBytes(SIZE);
    const direct = new S3Client({ endpoint: store.endpoint, region: store.region, forcePathStyle: true, credentials: keys, requestChecksumCalculation: 'WHEN_REQUIRED' });
    await direct.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'run42/big.bin', Body: data }));
    const dir = await tempDir('estuary-once-');
    const cli = await awscli(gw.url, job, ['s3', 'cp', `s3://${BUCKET}/run42/big.bin`, join(dir, 'cli.bin')]);
    expect(cli.code, cli.out).toBe(0);
    expect((await readFile(join(dir, 'cli.bin'))).equals(data)).toBe(true);
    const boto = await boto3(python!, gw.url, job, 'download', 'run42/big.bin', join(dir, 'boto.bin'));
    expect(boto).toEqual({ ok: true });
    expect((await readFile(join(dir, 'boto.bin'))).equals(data)).toBe(true);
    const gets = relay.count('GET', `/${BUCKET}/run42/big.bin`);
    const bytes = gets.reduce((n, s) => n + (s.bytes ?? 0), 0);
    expect(bytes / SIZE, JSON.stringify(gets)).toBe(1);
  });
});
