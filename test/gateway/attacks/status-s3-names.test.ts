// What the status page tells any client of --allow-client about the S3 endpoint's objects.
// docs/STAGING.md (the summary's threat model): every client of --allow-client "sees the first
// segment of each cached key and its size, whatever scope it holds. Where those names are
// themselves confidential, keep them out of the first segment of keys". A site that followed that
// advice expects the rest of a key to stay with the holders of a credential for its prefix.

import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { startS3rver } from '../../helpers/s3rver.ts';
import { BUCKET, startRig } from './s3-harness.ts';

describe('status page and S3 key names', () => {
  it('shows no more of a cached key than its first segment, like the summary', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const rig = await startRig(store);
    const cred = await rig.issue(`${BUCKET}/projA/`, true);
    const client = new S3Client({
      endpoint: rig.gw,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: cred,
    });
    const key = 'projA/cohort-2026/patient-ids-oncology-trial.h5';
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: Buffer.alloc(200_000, 7) }));
    const got = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    expect((await got.Body!.transformToByteArray()).length).toBe(200_000);
    client.destroy();

    // The summary keeps to its promise: s3://kek-data/projA and a size.
    const summary = await (await fetch(`${rig.gw}/estuary/v1/summary`)).text();
    expect(summary).toContain(`s3://${BUCKET}/projA`);
    expect(summary).not.toContain('patient-ids');

    // The page, to the same anonymous client, lists the largest objects by their full key.
    // Today: "largest objects … s3://kek-data/projA/cohort-2026/patient-ids-oncology-trial.h5".
    const page = await (await fetch(`${rig.gw}/estuary/v1/status`)).text();
    expect(page).toContain(`s3://${BUCKET}/projA`);
    expect(page).not.toContain('patient-ids-oncology-trial');
    expect(page).not.toContain('cohort-2026');
  }, 60_000);
});
