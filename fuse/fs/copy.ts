// Server-side copies of any size: CopyObject up to 5 GiB, UploadPartCopy beyond it, so renaming
// or re-tagging a big file never moves its bytes through this host.

import { type ObjectClient, S3_LIMITS, type WriteOptions } from '../s3/object-client.ts';
import { FsError } from './errno.ts';
import { abortUpload, type LateAborts } from './late-aborts.ts';
import { partRanges } from './part-sizes.ts';
import { inParallel } from './staging-file.ts';

/** Copy parts start at 512 MiB: few requests, and still under 10,000 parts up to 5 TiB. */
const COPY_PART_SIZE = 512 * 2 ** 20;

/**
 * Returns the ETag of the new object. A copy in parts that fails is aborted, through
 * `s.lateAborts` when given (tried again later if the server does not take it).
 */
export async function copyObject(
  s: { readonly client: ObjectClient; readonly lateAborts?: LateAborts },
  source: string,
  target: string,
  size: number,
  options: WriteOptions | undefined,
  parallel: number,
  limits: { singleCopy: number; partSize: number } = {
    singleCopy: S3_LIMITS.maxSinglePut,
    partSize: COPY_PART_SIZE,
  },
): Promise<string> {
  const client = s.client;
  if (size <= limits.singleCopy) return (await client.copy(source, target, options)).etag;
  const head = await client.head(source);
  if (!head) throw new FsError('ENOENT', `${source} vanished during a copy`);
  const id = await client.createMultipart(
    target,
    options ?? { metadata: head.metadata, contentType: head.contentType },
  );
  try {
    const ranges = partRanges(head.size, limits.partSize).map((r, i) => ({ ...r, partNumber: i + 1 }));
    const parts: { partNumber: number; etag: string }[] = [];
    await inParallel(ranges, parallel, async (r) => {
      parts.push({
        partNumber: r.partNumber,
        etag: await client.uploadPartCopy(target, id, r.partNumber, source, r),
      });
    });
    parts.sort((a, b) => a.partNumber - b.partNumber);
    return (await client.completeMultipart(target, id, parts)).etag;
  } catch (err) {
    await abortUpload(s, target, id);
    throw err;
  }
}
