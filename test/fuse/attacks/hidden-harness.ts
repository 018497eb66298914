// Shared pieces of the hidden-file attacks (hidden-*.test.ts): hidden-ops.py driven step by step
// against a real mount, and what another client sees in the bucket (keys, SHA-256 of bodies,
// unfinished multipart uploads).

import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { onTeardown } from '../../helpers/cleanup.ts';
import { type MinioServer, startMinio } from '../../helpers/minio.ts';
import { type Child, startChild } from '../../helpers/process.ts';
import type { S3Server } from '../../helpers/s3rver.ts';
import { s3Client } from '../../helpers/s3-smoke.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { type Mounted, mountBucket } from '../mount-helpers.ts';

export const MiB = 1024 * 1024;
const OPS = new URL('./hidden-ops.py', import.meta.url).pathname;

export const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** One run of hidden-ops.py; `open(step)` lets it past the step it waits at. */
export interface OpsRun {
  readonly child: Child;
  reached(step: string): Promise<void>;
  open(step: string): Promise<void>;
  result(): Promise<Record<string, unknown>>;
}

export async function ops(args: readonly string[], gated = true): Promise<OpsRun> {
  const gate = gated ? join(await tempDir('estuary-gate-'), 'g') : '';
  const child = startChild('python3', [OPS, ...args], { env: { ...process.env, GATE: gate } });
  return {
    child,
    reached: async (step) => {
      await child.waitFor(new RegExp(`^STEP ${step}$`, 'm'), 50_000);
    },
    open: (step) => writeFile(`${gate}.${step}`, ''),
    result: async () => {
      const m = await child.waitFor(/^RESULT (\{.*\})$/m, 50_000).catch(() => {
        throw new Error(`hidden-ops.py ${args.join(' ')} gave no result:\n${child.output()}`);
      });
      return JSON.parse(m[1]!) as Record<string, unknown>;
    },
  };
}

/** Runs a command of hidden-ops.py that has no step to wait at. */
export async function opsResult(args: readonly string[]): Promise<Record<string, unknown>> {
  const run = await ops(args, false);
  return run.result();
}

/** The deterministic bytes hidden-ops.py writes for `seed` (Python's random.Random.randbytes). */
export async function opsData(seed: number, n: number): Promise<Buffer> {
  const child = startChild('python3', ['-c', `import random,sys;sys.stdout.buffer.write(random.Random(${seed}).randbytes(${n}).hex().encode())`]);
  await child.exited;
  return Buffer.from(child.output().trim(), 'hex');
}

export class Bucket {
  readonly s3: S3Client;
  readonly server: S3Server;
  readonly name: string;
  constructor(server: S3Server, name: string) {
    this.server = server;
    this.name = name;
    this.s3 = s3Client(server);
  }

  async create(): Promise<void> {
    await this.s3.send(new CreateBucketCommand({ Bucket: this.name }));
  }

  async keys(): Promise<string[]> {
    const r = await this.s3.send(new ListObjectsV2Command({ Bucket: this.name }));
    return (r.Contents ?? []).map((o) => o.Key!).sort();
  }

  async body(key: string): Promise<Buffer | undefined> {
    try {
      const r = await this.s3.send(new GetObjectCommand({ Bucket: this.name, Key: key }));
      return Buffer.from(await r.Body!.transformToByteArray());
    } catch (err) {
      if ((err as { name?: string }).name === 'NoSuchKey') return undefined;
      throw err;
    }
  }

  async sha(key: string): Promise<string | undefined> {
    const b = await this.body(key);
    return b && sha256(b);
  }

  async put(key: string, body: Buffer): Promise<void> {
    await this.s3.send(new PutObjectCommand({ Bucket: this.name, Key: key, Body: body }));
  }

  /** Another client's multipart upload of `body` in parts of `part` bytes. */
  async putMultipart(key: string, body: Buffer, part = 5 * MiB): Promise<void> {
    const { UploadId } = await this.s3.send(new CreateMultipartUploadCommand({ Bucket: this.name, Key: key }));
    const parts = [];
    for (let n = 1, at = 0; at < body.length; n++, at += part) {
      const r = await this.s3.send(
        new UploadPartCommand({ Bucket: this.name, Key: key, UploadId, PartNumber: n, Body: body.subarray(at, at + part) }),
      );
      parts.push({ PartNumber: n, ETag: r.ETag });
    }
    await this.s3.send(
      new CompleteMultipartUploadCommand({ Bucket: this.name, Key: key, UploadId, MultipartUpload: { Parts: parts } }),
    );
  }

  async uploads(): Promise<string[]> {
    const r = await this.s3.send(new ListMultipartUploadsCommand({ Bucket: this.name }));
    return (r.Uploads ?? []).map((u) => u.Key!).sort();
  }
}

let bucketCounter = 0;

/** A fresh bucket and a mount of it with `extra` flags. */
/** MinIO, resumed at teardown (attacks stop it with SIGSTOP), with a new bucket `name`. */
export async function stoppableMinio(name: string): Promise<{ server: MinioServer; bucket: Bucket }> {
  const server = await startMinio();
  onTeardown(() => {
    process.kill(server.child.pid, 'SIGCONT');
  });
  const bucket = new Bucket(server, name);
  await bucket.create();
  return { server, bucket };
}

export async function freshMount(server: S3Server, extra: readonly string[] = []): Promise<{ bucket: Bucket; mnt: Mounted }> {
  const bucket = new Bucket(server, `hid-${process.pid}-${++bucketCounter}`);
  await bucket.create();
  const cache = extra.includes('--cache-dir') ? [] : ['--cache-dir', await tempDir('estuary-hidcache-')];
  const mnt = await mountBucket(server, bucket.name, [...cache, '--cache-ttl', '0s', ...extra]);
  return { bucket, mnt };
}

/** Polls `fn` until it returns true or `ms` pass; returns its last answer. */
export async function eventually(fn: () => Promise<boolean>, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await fn()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}
