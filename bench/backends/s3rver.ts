// s3rver, the default backend: the npm package's CLI in its own process (so its CPU use is its
// own and a crash cannot take the bench with it), on an ephemeral port, with a fresh data
// directory the run deletes afterwards. Keys are s3rver's fixed S3RVER/S3RVER.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { optionalPackageSync } from '../../lib/optional-package.ts';
import { startProcess } from '../proc.ts';
import type { ServerPlacement, StartedServer } from './backend.ts';

const require = createRequire(import.meta.url);

/**
 * s3rver's package.json. s3rver is an optional package (a worker-node install leaves it out):
 * without it this throws the one-line error that names it, which the bench shows (exit 2) before
 * it starts anything.
 */
export function s3rverPackage(): string {
  const need = { feature: "the bench's local S3 server", instead: 'give --backend swift or --endpoint URL' };
  return optionalPackageSync('s3rver', need, () => require.resolve('s3rver/package.json'));
}

export function s3rverVersion(): string {
  const pkg = s3rverPackage();
  return (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version;
}

/**
 * Node arguments that run s3rver's CLI on `host`, on a free port, over `dataDir`. The bench and
 * the test harness both start it this way.
 */
export function s3rverArgs(dataDir: string, host: string, buckets: readonly string[] = []): string[] {
  const bin = join(dirname(s3rverPackage()), 'bin', 's3rver.js');
  // s3rver encrypts ListObjectsV2 continuation tokens with DES, which OpenSSL 3 keeps in its
  // legacy provider: without it every listing of more than 1000 keys fails with a 500.
  const args = ['--openssl-legacy-provider', bin, '-d', dataDir, '-a', host, '-p', '0', '--no-vhost-buckets'];
  for (const b of buckets) args.push('--configure-bucket', b);
  return args;
}

export async function startS3rver(placement: ServerPlacement): Promise<StartedServer> {
  const args = [...s3rverArgs(placement.dataDir, placement.host), '--silent'];
  const [cmd, ...prefix] = [...placement.execPrefix, process.execPath];
  const child = startProcess('s3rver', cmd!, [...prefix, ...args]);
  // s3rver prints its address even with --silent; 20 s covers a cold start on a loaded machine.
  const m = await child.waitFor(/listening on [^\s]+:(\d+)/, 20_000);
  return {
    kind: 's3rver',
    port: Number(m[1]),
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    region: 'us-east-1',
    version: `s3rver ${s3rverVersion()}`,
    stop: async () => {
      await child.stop('SIGTERM', 5000);
    },
  };
}
