// What the mount's S3 data path costs without FUSE: the mount's own client (fuse/s3/s3-client.ts)
// fetches ten 100 MB objects from a local s3rver as the mount's readahead does for `cp -r` (ranged
// GETs of 32 MiB, two in flight, the pieces in the client's slab pool), copies every piece out in
// 128 KiB steps as replies to FUSE would be, and gives the pieces back. Prints, per run, the rate
// and this process's CPU time per GB (user + system, every thread), and the load average. Beside
// `scripts/fuse-native-floor.ts` (FUSE without S3) and the bench's CPU s/GB (both together) it
// splits a download's CPU into its parts.
// Results: docs/BENCHMARKING.md, "Against mountpoint-s3 alone, and where a download's time goes".
//
//   node scripts/s3-data-path-cpu.ts [--runs 5]
//
// Needs root or FUSE (the objects are written through a mount), and s3rver.

import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { keepYoungGenerationSmall } from '../fuse/heap.ts';
import { S3ObjectClient } from '../fuse/s3/s3-client.ts';
import { loadavg, median, mountBench, processCpuSeconds } from './mount-trees.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const RUNS = Number(values.runs);
const FILES = 10;
const SIZE = 100 * 2 ** 20;
/** The readahead's GET size and how many travel at once for a whole-file reader (prefetcher.ts). */
const PIECE = 32 * 2 ** 20;
const IN_FLIGHT = 2;
const FUSE_REPLY = 128 * 1024;

const bench = await mountBench('s3-data-path', 'data');
try {
  const mount = await bench.mount(resolve(import.meta.dirname, '..'), true);
  mkdirSync(join(bench.mnt, 'd'));
  for (let i = 0; i < FILES; i++) {
    execFileSync('dd', ['if=/dev/urandom', `of=${join(bench.mnt, 'd', `f${i}`)}`, 'bs=1M', `count=${SIZE / 2 ** 20}`, 'status=none']);
  }
  await mount.stop('SIGTERM', 60_000);
  // As the mount does at start: a small young generation keeps scavenges cheap.
  keepYoungGenerationSmall();
  const client = new S3ObjectClient({
    bucket: 'data',
    endpoint: bench.endpoint,
    region: 'us-east-1',
    maxAttempts: 3,
    idleTimeoutMs: 30_000,
    maxSockets: 64,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  const reply = Buffer.allocUnsafe(FUSE_REPLY);
  const onPiece = (piece: Buffer) => {
    for (let at = 0; at < piece.length; at += FUSE_REPLY) piece.copy(reply, 0, at, Math.min(piece.length, at + FUSE_REPLY));
    client.releasePiece(piece);
  };
  const perGb: number[] = [];
  for (let run = 1; run <= RUNS; run++) {
    const c0 = processCpuSeconds('self');
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < FILES; i++) {
      const key = `d/f${i}`;
      let next = 0;
      const fetchNext = async (): Promise<void> => {
        for (let start = next; start < SIZE; start = next) {
          next += PIECE;
          await client.getPieces(key, { start, end: Math.min(SIZE, start + PIECE) }, onPiece);
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, fetchNext));
    }
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const gb = (FILES * SIZE) / 1e9;
    perGb.push((processCpuSeconds('self') - c0) / gb);
    console.log(`run ${run}: ${(gb * 1000 / seconds).toFixed(0)} MB/s, ${perGb.at(-1)!.toFixed(2)} CPU s/GB, load ${loadavg()}`);
  }
  console.log(`median: ${median(perGb).toFixed(2)} CPU s/GB`);
} finally {
  await bench.close();
}
