// A hundred files read at once through a mount with the smallest --memory-limit: every reader
// gets its file's exact bytes, none hangs, and the mount's memory stays near its budget
// (docs/CONFIGURATION.md, --memory-limit: "hard budget for readahead and write buffers";
// docs/SEMANTICS.md, "read": when the budget is spent "a read fetches just the bytes asked for").

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';

const fuse = fuseAvailable();
const MiB = 2 ** 20;
const FILES = 100;

function rss(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
}

describe.runIf(fuse.ok)('a hundred readers at once', () => {
  it('all read their exact bytes within the memory budget', async () => {
    const s3 = await startS3rver({ buckets: ['many'] });
    const truth = await tempDir('estuary-atk-many-');
    const body = randomBytes(3 * MiB + 333);
    await writeFile(`${truth}/f`, body);
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    for (let i = 0; i < FILES; i += 10)
      await Promise.all(
        Array.from({ length: 10 }, (_, j) =>
          client.send(new PutObjectCommand({ Bucket: 'many', Key: `d/f${String(i + j).padStart(3, '0')}`, Body: body })),
        ),
      );
    client.destroy();
    const m = await mountBucket(s3, 'many', ['--memory-limit', '64MiB']);
    await sh(`ls '${m.dir}/d' > /dev/null`);
    const base = rss(m.child.pid);
    let peak = base;
    let threads = 0;
    const sample = setInterval(() => {
      peak = Math.max(peak, rss(m.child.pid));
      threads = Math.max(threads, Number(/Threads:\s+(\d+)/.exec(readFileSync(`/proc/${m.child.pid}/status`, 'utf8'))?.[1]));
    }, 100);
    const started = Date.now();
    // Each reader compares its file with the true bytes; a mismatch prints its name.
    const r = await sh(
      `cd '${m.dir}/d' && for f in f*; do (cmp -s "$f" '${truth}/f' || echo "BAD $f") & done; wait`,
      undefined,
      50_000,
    );
    clearInterval(sample);
    console.log(
      `${FILES} readers: ${Date.now() - started} ms, mount RSS base ${(base / MiB).toFixed(0)} MiB, peak ${(peak / MiB).toFixed(0)} MiB, threads at most ${threads}; load ${readFileSync('/proc/loadavg', 'utf8').trim()}`,
    );
    expect(r.out.trim()).toBe('');
    expect(r.code).toBe(0);
    expect(peak - base).toBeLessThan(64 * MiB + 48 * MiB);
  }, 60_000);
});
