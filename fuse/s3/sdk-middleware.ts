// Two changes to what the AWS SDK sends, for S3-compatible servers and for speed: Content-MD5
// instead of CRC32 on DeleteObjects, and unsigned payloads on uploads.

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

// SigV4 normally hashes every body with SHA-256 before sending it: for part uploads that hashing
// was the mount's largest CPU cost after garbage collection. S3 accepts UNSIGNED-PAYLOAD instead
// (the headers stay signed; TCP and TLS carry the bytes), and the signer uses a value already set.
const UNSIGNED_BODIES = new Set(['PutObjectCommand', 'UploadPartCommand']);

export function unsignedPayloads(client: S3Client): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const req = args.request as { headers?: Record<string, string> };
      if (UNSIGNED_BODIES.has(context.commandName ?? '') && req.headers) {
        req.headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
      }
      return next(args);
    },
    { step: 'build', priority: 'low', name: 'estuaryUnsignedPayload' },
  );
}
