// Read patterns through a real mount, each checked byte for byte by a small pread script
// (mount-read-patterns.py): reverse sequential reads, reads across the end of the file, eight
// threads at random offsets on one descriptor, eight descriptors reading side by side, a reader
// that pauses past the store's keep-alive, and strided reads that skip what readahead fetched.
// The promise (docs/SEMANTICS.md, "read"): a read returns exactly the object's bytes.

import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';

const fuse = fuseAvailable();
const SCRIPT = new URL('./mount-read-patterns.py', import.meta.url).pathname;
const PATTERNS = ['reverse', 'eof', 'threads', 'readers', 'pause', 'strided'];

describe.runIf(fuse.ok)('read patterns through the mount', () => {
  it('every pattern reads the object\'s exact bytes', async () => {
    const s3 = await startS3rver({ buckets: ['patterns'] });
    const truth = await tempDir('estuary-atk-truth-');
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    // A size that is no multiple of a page, a read or a GET.
    for (const kind of PATTERNS) {
      const body = randomBytes(24 * 2 ** 20 + 4097);
      await writeFile(`${truth}/${kind}.bin`, body);
      await client.send(new PutObjectCommand({ Bucket: 'patterns', Key: `${kind}.bin`, Body: body }));
    }
    client.destroy();
    const m = await mountBucket(s3, 'patterns', ['--memory-limit', '64MiB']);
    const r = await sh(`python3 '${SCRIPT}' '${m.dir}' '${truth}' ${PATTERNS.map((k) => `${k}:${k}.bin`).join(' ')}`);
    expect(r.out.split('\n').filter((l) => l.startsWith('BAD'))).toEqual([]);
    expect(r.code).toBe(0);
  }, 60_000);
});
