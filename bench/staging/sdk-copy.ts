// The floors `estuary stage` is measured against, each its own process so its time and memory are
// its own: `copy FROM TO` moves a flat directory to or from s3://bucket/prefix/ with the AWS SDK
// alone (bench/s3.ts: parallel multipart uploads and GETs, no hashing, no journal, no checks);
// `hash DIR` is the SHA-256 pass over the same files with one reused buffer, as stage reads them;
// `idle` loads Node and the SDK, makes a client and exits: the memory no copy can go below.
// Endpoint, region and keys come from BENCH_ENDPOINT, AWS_REGION and AWS_* variables.

import { createHash } from 'node:crypto';
import { mkdir, open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { downloadFiles, listSizes, s3Client, uploadFiles } from '../s3.ts';

function client() {
  return s3Client({
    endpoint: process.env.BENCH_ENDPOINT ?? '',
    region: process.env.AWS_REGION ?? 'us-east-1',
    accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? '',
    secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? '',
  });
}

function s3Url(u: string): { bucket: string; prefix: string } {
  const m = /^s3:\/\/([^/]+)\/(.*)$/.exec(u);
  if (!m) throw new Error(`not s3://bucket/prefix/: ${u}`);
  return { bucket: m[1]!, prefix: m[2]! };
}

async function copy(from: string, to: string): Promise<void> {
  const s3 = client();
  if (to.startsWith('s3://')) {
    const { bucket, prefix } = s3Url(to);
    const names = await readdir(from);
    const files = await Promise.all(names.map(async (n) => ({ key: `${prefix}${n}`, path: join(from, n), bytes: (await stat(join(from, n))).size })));
    await uploadFiles(s3, bucket, files);
  } else {
    const { bucket, prefix } = s3Url(from);
    const sizes = await listSizes(s3, bucket, prefix);
    await mkdir(to, { recursive: true });
    await downloadFiles(s3, bucket, [...sizes].map(([key, bytes]) => ({ key, path: join(to, key.slice(prefix.length)), bytes })));
  }
  s3.destroy();
}

async function hash(dir: string): Promise<void> {
  const buf = Buffer.allocUnsafe(256 * 1024);
  for (const n of await readdir(dir)) {
    const h = createHash('sha256');
    const fh = await open(join(dir, n), 'r');
    for (let r = await fh.read(buf, 0, buf.length, null); r.bytesRead > 0; r = await fh.read(buf, 0, buf.length, null)) h.update(buf.subarray(0, r.bytesRead));
    await fh.close();
    h.digest();
  }
}

const [mode, a, b] = process.argv.slice(2);
if (mode === 'copy') await copy(a!, b!);
else if (mode === 'hash') await hash(a!);
else if (mode === 'idle') client().destroy();
else throw new Error('usage: sdk-copy.ts copy FROM TO | hash DIR | idle');
