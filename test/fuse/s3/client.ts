import { S3ObjectClient } from '../../../fuse/s3/s3-client.ts';
import { onTeardown } from '../../helpers/cleanup.ts';
import type { S3Server } from '../../helpers/s3rver.ts';

/** The mount's S3 client for a test server, destroyed after the file. */
export function storeClient(server: S3Server, bucket: string): S3ObjectClient {
  const client = new S3ObjectClient({
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
