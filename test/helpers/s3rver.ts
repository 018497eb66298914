// A real S3 server for tests: s3rver in its own process on a random loopback port with a fresh
// data directory, so a test can also kill it mid-transfer. Stopped after the test file.

import { s3rverArgs } from '../../bench/backends/s3rver.ts';
import { type Child, NODE, startChild } from './process.ts';
import { tempDir } from './tmp.ts';

/** A running S3-compatible server; s3rver, Swift's s3api and MinIO all present this shape. */
export interface S3Server {
  readonly kind: 's3rver' | 'swift' | 'minio';
  readonly endpoint: string;
  readonly port: number;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly region: string;
  readonly dataDir: string;
  /** Graceful stop; also registered as a teardown. */
  stop(): Promise<void>;
  /** SIGKILL, for tests of a server dying mid-transfer. */
  kill(): Promise<void>;
}

export interface S3rverServer extends S3Server {
  readonly child: Child;
}

export async function startS3rver(
  /** `port`: a restart on the address of a server that was stopped, as a real store keeps its own. */
  options: { buckets?: readonly string[]; dataDir?: string; port?: number } = {},
): Promise<S3rverServer> {
  const dataDir = options.dataDir ?? (await tempDir('estuary-s3rver-'));
  const args = s3rverArgs(dataDir, '127.0.0.1', options.buckets);
  if (options.port !== undefined) args[args.indexOf('-p') + 1] = String(options.port);
  const child = startChild(NODE, args);
  const m = await child.waitFor(/listening on 127\.0\.0\.1:(\d+)/, 20_000);
  const port = Number(m[1]);
  return {
    kind: 's3rver',
    endpoint: `http://127.0.0.1:${port}`,
    port,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    region: 'us-east-1',
    dataDir,
    child,
    stop: async () => {
      await child.stop('SIGTERM', 5000);
    },
    kill: async () => {
      await child.stop('SIGKILL');
    },
  };
}
