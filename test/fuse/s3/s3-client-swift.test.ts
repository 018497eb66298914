import { afterAll, describe } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startSwift, swiftAvailable } from '../../helpers/swift.ts';
import { objectClientContract } from './contract.ts';
import { storeClient } from './client.ts';

afterAll(runTeardowns);

const swift = await swiftAvailable();

describe.runIf(swift.ok)('Swift s3api', () => {
  objectClientContract('S3ObjectClient against OpenStack Swift s3api', async () => {
    const server = await startSwift({ buckets: ['contract'] });
    return {
      client: storeClient(server, 'contract'),
      missingBucket: storeClient(server, 'no-such-bucket'),
      awsMultipartEtags: true,
      partCopy: true,
      partCopyIfMatchMultipart: false,
      emptyRangeGet: true,
      listsUploads: true,
    };
  });
});
