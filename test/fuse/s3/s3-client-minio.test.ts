// MinIO checks every signature strictly, which s3rver and Swift's s3api do not: the contract here
// proves the data path's own SigV4 (lib/sigv4.ts) signs what the SDK would have.

import { afterAll, describe } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { objectClientContract } from './contract.ts';
import { storeClient } from './client.ts';

afterAll(runTeardowns);

const minio = await minioAvailable();

describe.runIf(minio.ok)('MinIO', () => {
  objectClientContract('S3ObjectClient against MinIO', async () => {
    const server = await startMinio({ buckets: ['contract'] });
    return {
      client: storeClient(server, 'contract'),
      missingBucket: storeClient(server, 'no-such-bucket'),
      awsMultipartEtags: true,
      partCopy: true,
      emptyRangeGet: true,
      listsUploads: true,
      listsUploadsByKeyOnly: true,
    };
  });
});
