import { SdkObjectClient } from '../../../fuse/s3/sdk-client.ts';
import { onTeardown } from '../../helpers/cleanup.ts';
import type { S3Server } from '../../helpers/s3rver.ts';

/** An SDK client for a test server, destroyed after the file. */
export function sdkClient(server: S3Server, bucket: string): SdkObjectClient {
  const client = new SdkObjectClient({
    bucket,
    endpoint: server.endpoint,
    region: server.region,
    maxAttempts: 2,
    maxSockets: 16,
    idleTimeoutMs: 60_000,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
  });
  onTeardown(() => client.destroy());
  return client;
}
