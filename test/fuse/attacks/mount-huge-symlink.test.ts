// A symlink object (s3fs's way: x-amz-meta-mode with the S_IFLNK type, the target as its body)
// written by another client of the bucket with a huge body. `ls -l` or any path walk calls
// readlink, which today GETs the whole object into memory and decodes it as a string. A target
// is at most PATH_MAX (4096) bytes: more is no link target. Expected: readlink fails at once
// (ENAMETOOLONG or EIO) without reading the object, and the mount stays within its budget
// (docs/SEMANTICS.md tenet 4: "the mount never grows past the budget").

import { readFileSync } from 'node:fs';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { startS3rver } from '../../helpers/s3rver.ts';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';

const fuse = fuseAvailable();
const MiB = 2 ** 20;

function rss(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
}

describe.runIf(fuse.ok)('a symlink object with a 160 MiB body', () => {
  it('readlink refuses it without reading it into memory', async () => {
    const s3 = await startS3rver({ buckets: ['links'] });
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    await client.send(
      new PutObjectCommand({
        Bucket: 'links',
        Key: 'big-link',
        Body: Buffer.alloc(160 * MiB, 'a'),
        Metadata: { mode: String(0o120777) },
      }),
    );
    client.destroy();
    const m = await mountBucket(s3, 'links', ['--memory-limit', '64MiB']);
    const kind = await sh(`stat -c %F '${m.dir}/big-link'`);
    expect(kind.out.trim()).toBe('symbolic link');
    const base = rss(m.child.pid);
    let peak = base;
    const sample = setInterval(() => (peak = Math.max(peak, rss(m.child.pid))), 50);
    const r = await sh(`readlink '${m.dir}/big-link' | wc -c`);
    clearInterval(sample);
    console.log(`readlink printed ${r.out.trim()} bytes; mount RSS base ${(base / MiB).toFixed(0)} MiB, peak ${(peak / MiB).toFixed(0)} MiB`);
    expect(peak - base, 'memory readlink of one symlink took').toBeLessThan(64 * MiB);
  }, 60_000);
});
