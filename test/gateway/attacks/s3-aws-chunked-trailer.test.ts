// Every current S3 client must work unchanged inside its scope. The AWS SDK for JavaScript v3 with
// its defaults sends a streamed PutObject as `aws-chunked` with an unsigned CRC32 trailer
// (x-amz-content-sha256: STREAMING-UNSIGNED-PAYLOAD-TRAILER). The gateway refuses chunk-signed
// bodies (STREAMING-AWS4-HMAC-SHA256-PAYLOAD) but forwards this one as it is; s3rver does not
// decode aws-chunked and stores the framing as the object's bytes, answering 200: the job's
// output is silently corrupt (and served so from the cache). Swift refuses it with NotImplemented.
// Expected: the object holds exactly what was sent, or the upload is refused with an S3 error
// that says what to do (as for the chunk-signed form).

import { Readable } from 'node:stream';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { BUCKET, direct, type Rig, startRig } from './s3-harness.ts';

afterAll(runTeardowns);

describe('s3 attack: aws-chunked with an unsigned trailer through the gateway (s3rver)', () => {
  let rig: Rig;
  let store: Awaited<ReturnType<typeof startS3rver>>;
  beforeAll(async () => {
    store = await startS3rver({ buckets: [BUCKET] });
    rig = await startRig(store);
  }, 60_000);

  it('a streamed PutObject with the SDK defaults stores the bytes sent, or is refused', async () => {
    const w = await rig.issue(`${BUCKET}/run42/`, true);
    const client = new S3Client({ endpoint: rig.gw, region: 'us-east-1', forcePathStyle: true, credentials: w });
    let refused = false;
    try {
      await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'run42/out.txt', Body: Readable.from([Buffer.from('hello stream')]), ContentLength: 12 }));
    } catch {
      refused = true;
    }
    client.destroy();
    if (refused) return;
    expect((await direct(store, 'GET', `/${BUCKET}/run42/out.txt`)).body).toBe('hello stream');
  });
});
