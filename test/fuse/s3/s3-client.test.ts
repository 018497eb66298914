import { afterAll } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { objectClientContract } from './contract.ts';
import { storeClient } from './client.ts';

afterAll(runTeardowns);

objectClientContract('S3ObjectClient against s3rver', async () => {
  const server = await startS3rver({ buckets: ['contract'] });
  return {
    client: storeClient(server, 'contract'),
    missingBucket: storeClient(server, 'no-such-bucket'),
    // s3rver answers a multipart upload with a plain MD5, and UploadPartCopy with 501.
    awsMultipartEtags: false,
    partCopy: false,
    emptyRangeGet: false,
    listsUploads: false,
  };
});
