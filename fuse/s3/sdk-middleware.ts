// One change to what the AWS SDK sends, for S3-compatible servers: Content-MD5 instead of CRC32 on
// DeleteObjects. (Uploads, which went unsigned here, go through the data path now.)

import { createHash } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';

// DeleteObjects is the one call S3 requires a body checksum for. The SDK sends CRC32, which
// Swift's s3api refuses; Content-MD5 is accepted by every server.
export function contentMd5ForDeleteObjects(client: S3Client): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const req = args.request as { headers?: Record<string, string>; body?: unknown };
      if (context.commandName === 'DeleteObjectsCommand' && req.headers && typeof req.body === 'string') {
        for (const h of Object.keys(req.headers)) {
          if (
            h.toLowerCase().startsWith('x-amz-checksum-') ||
            h.toLowerCase() === 'x-amz-sdk-checksum-algorithm'
          )
            delete req.headers[h];
        }
        req.headers['content-md5'] = createHash('md5').update(req.body).digest('base64');
      }
      return next(args);
    },
    { step: 'build', priority: 'low', name: 'estuaryContentMd5' },
  );
}
