import { afterAll, describe } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startSwift, swiftAvailable } from '../../helpers/swift.ts';
import { objectClientContract } from './contract.ts';
import { sdkClient } from './sdk.ts';

afterAll(runTeardowns);

const swift = await swiftAvailable();

describe.runIf(swift.ok)('Swift s3api', () => {
  objectClientContract('AWS SDK against OpenStack Swift s3api', async () => {
    const server = await startSwift({ buckets: ['contract'] });
    return {
      client: sdkClient(server, 'contract'),
      missingBucket: sdkClient(server, 'no-such-bucket'),
      awsMultipartEtags: true,
      partCopy: true,
      emptyRangeGet: true,
      listsUploads: true,
    };
  });
});
