// s3rver for the mount's tests. Its ListObjectsV2 continuation tokens use DES, which OpenSSL 3
// only offers through the legacy provider on every Node version, not only before 22 as the shared
// helper assumes; children inherit NODE_OPTIONS, so set it before the server starts.

import { startS3rver, type S3rverServer } from '../helpers/s3rver.ts';

export async function startS3rverWithPaging(
  options: { buckets?: readonly string[]; dataDir?: string } = {},
): Promise<S3rverServer> {
  const current = process.env.NODE_OPTIONS ?? '';
  if (!current.includes('--openssl-legacy-provider')) {
    process.env.NODE_OPTIONS = `${current} --openssl-legacy-provider`.trim();
  }
  return startS3rver(options);
}
