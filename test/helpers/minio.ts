// MinIO for tests: a third real S3 server beside s3rver and Swift, and the strict one. It keeps
// the checksums clients send (and answers them back with x-amz-checksum-mode), checks signatures
// and aws-chunked framing the way AWS does, and enforces part sizes. Built from the Go module
// proxy by scripts/ensure-minio.sh into a cache directory (never into the repository); each
// test file gets its own server on a free loopback port with a fresh directory, stopped after it.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { onTeardown } from './cleanup.ts';
import { type Child, startChild } from './process.ts';
import type { S3Server } from './s3rver.ts';
import { type Availability, required } from './services.ts';
import { tempDir } from './tmp.ts';

export const ENSURE_MINIO = fileURLToPath(new URL('../../scripts/ensure-minio.sh', import.meta.url));
const ACCESS_KEY = 'estuary-minio';
const SECRET_KEY = 'estuary-minio-secret';
// A cold start on 2 loaded cores takes 1–3 s; a free port taken meanwhile gets one more try.
const START_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5_000;

export interface MinioServer extends S3Server {
  readonly kind: 'minio';
  readonly child: Child;
}

/** The path ensure-minio.sh builds the binary at; nothing is built. */
export function minioBinary(): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [ENSURE_MINIO, '--path'], (err, stdout) => (err ? reject(err) : resolve(stdout.trim())));
  });
}

/**
 * Whether MinIO has been built here. Outside CI a missing build skips the tests with the command
 * that builds it (minutes, once); in CI, where .ci/run builds it first, it fails the file.
 */
export async function minioAvailable(): Promise<Availability> {
  const bin = await minioBinary();
  return required('MinIO', existsSync(bin), `bash scripts/ensure-minio.sh (builds ${bin} from the Go module proxy)`);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export async function startMinio(options: { buckets?: readonly string[]; dataDir?: string } = {}): Promise<MinioServer> {
  const bin = await minioBinary();
  if (!existsSync(bin)) throw new Error(`MinIO is not built: run bash scripts/ensure-minio.sh (it builds ${bin})`);
  const dataDir = options.dataDir ?? (await tempDir('estuary-minio-'));
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const consolePort = await freePort();
    const child = startChild(bin, ['server', dataDir, '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${consolePort}`], {
      env: {
        PATH: process.env.PATH,
        HOME: dataDir,
        MINIO_ROOT_USER: ACCESS_KEY,
        MINIO_ROOT_PASSWORD: SECRET_KEY,
        MINIO_BROWSER: 'off',
        MINIO_UPDATE: 'off',
        MINIO_CI_CD: '1',
      },
    });
    try {
      await waitReady(child, port);
    } catch (err) {
      await child.stop('SIGKILL');
      if (attempt < 1 && /address already in use/i.test(child.output())) continue;
      throw err;
    }
    const stop = async () => {
      await child.stop('SIGTERM', STOP_GRACE_MS);
    };
    onTeardown(stop);
    const server: MinioServer = {
      kind: 'minio',
      endpoint: `http://127.0.0.1:${port}`,
      port,
      accessKeyId: ACCESS_KEY,
      secretAccessKey: SECRET_KEY,
      region: 'us-east-1',
      dataDir,
      child,
      stop,
      kill: async () => {
        await child.stop('SIGKILL');
      },
    };
    if (options.buckets?.length) await createBuckets(server, options.buckets);
    return server;
  }
}

/** Ready when the liveness endpoint answers 200; fails early when the process exits. */
async function waitReady(child: Child, port: number): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  let exited = false;
  void child.exited.then(() => {
    exited = true;
  });
  while (Date.now() < deadline) {
    if (exited) throw new Error(`MinIO exited before it was ready; output:\n${child.output()}`);
    const ok = await fetch(`http://127.0.0.1:${port}/minio/health/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`MinIO did not become ready within ${START_TIMEOUT_MS} ms; output:\n${child.output()}`);
}

async function createBuckets(server: S3Server, buckets: readonly string[]): Promise<void> {
  const s3 = new S3Client({
    endpoint: server.endpoint,
    region: server.region,
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
  });
  try {
    for (const Bucket of buckets) await s3.send(new CreateBucketCommand({ Bucket }));
  } finally {
    s3.destroy();
  }
}
