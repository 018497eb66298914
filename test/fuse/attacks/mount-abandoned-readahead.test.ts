// Readahead a reader leaves behind: readers killed with SIGKILL mid-read while the store is slow.
// Their files close, the readahead GETs they had asked for give their memory back to the budget at
// once, but nothing stops those GETs: they go on streaming into memory that the budget no longer
// counts. The promise (docs/CONFIGURATION.md, --memory-limit): "hard budget for readahead and
// write buffers"; the mount's memory must not grow with readers that came and went.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { startS3rver } from '../../helpers/s3rver.ts';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { startShapingRelay } from './shaping-relay.ts';

const fuse = fuseAvailable();
const MiB = 2 ** 20;
const FILES = 4;
const SIZE = 40 * MiB;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rss(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) * 1024;
}

describe.runIf(fuse.ok)('readers killed mid-read on a slow store', () => {
  it('the mount stays within --memory-limit while the GETs they left behind finish', async () => {
    const s3 = await startS3rver({ buckets: ['slow'] });
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    const body = randomBytes(SIZE);
    for (let i = 0; i < FILES; i++)
      await client.send(new PutObjectCommand({ Bucket: 'slow', Key: `f${i}`, Body: body }));
    for (const name of ['a-small', 'b-small'])
      await client.send(new PutObjectCommand({ Bucket: 'slow', Key: name, Body: randomBytes(4096) }));
    client.destroy();
    // 1 MB/s per GET: an 8 MiB readahead GET takes ~9 s, long after its reader is gone.
    const relay = await startShapingRelay(s3, { bytesPerSecond: 1e6 });
    let gets = 0;
    const count = setInterval(() => (gets = Math.max(gets, relay.open.size)), 50);
    const limit = 64 * MiB;
    const m = await mountBucket(relay.server, 'slow', ['--memory-limit', '64MiB']);
    await sleep(500);
    const base = rss(m.child.pid);
    let peak = base;
    const sample = setInterval(() => (peak = Math.max(peak, rss(m.child.pid))), 100);
    try {
      for (let round = 0; round < 10; round++) {
        // Two whole files read in a row: the next opens ask for their whole window at once, as
        // they do for cp -r, tar or rsync.
        await sh(`cat '${m.dir}/a-small' '${m.dir}/b-small' > /dev/null`);
        const readers = Array.from({ length: FILES }, (_, i) =>
          spawn('dd', [`if=${m.dir}/f${i}`, 'of=/dev/null', 'bs=128k', `skip=${round * 8}`], { stdio: 'ignore' }),
        );
        await sleep(1000);
        for (const r of readers) r.kill('SIGKILL');
        // Their files' releases come in before the next whole-file reads.
        await Promise.all(readers.map((r) => new Promise((done) => r.once('close', done))));
        await sleep(200);
      }
      await sleep(1000);
    } finally {
      clearInterval(sample);
      clearInterval(count);
    }
    const grown = peak - base;
    const left = relay.gets.filter((g) => g.range.endsWith('-9437183') || g.range.endsWith('-17825791'));
    const streamed = left.reduce((n, g) => n + g.sent, 0);
    console.log(
      `mount RSS: base ${(base / MiB).toFixed(0)} MiB, peak ${(peak / MiB).toFixed(0)} MiB, grown ${(grown / MiB).toFixed(0)} MiB; object GETs streaming at once: at most ${gets}, at the end ${relay.open.size}; ${left.length} GETs of 8 MiB asked for ahead streamed ${(streamed / MiB).toFixed(0)} MiB for readers that were gone; load ${readFileSync('/proc/loadavg', 'utf8').trim()}`,
    );
    // The budget plus room for the pooled slabs (16 MiB) and the heap's own churn.
    expect(grown, 'memory the mount grew by above its --memory-limit budget').toBeLessThan(limit + 48 * MiB);
  }, 60_000);
});
