// The client-compatibility matrix: each S3 client with its default settings (multipart set to
// S3's smallest part, 5 MiB, so a 6 MiB file goes up in two parts), through the gateway with a
// credential scoped to `run42/`, against each store. Every cell is an operation a job does; the
// results must equal docs/s3-client-matrix.json, which `npm run docs` renders into
// docs/STAGING.md. After a deliberate change, ESTUARY_UPDATE_MATRIX=1 rewrites the JSON.

import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { copyFile, mkdir, open, readdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { MATRIX_FILE, MATRIX_OPS, type Matrix } from '../../scripts/gen-s3-client-matrix.ts';
import { minioAvailable, startMinio } from '../helpers/minio.ts';
import type { S3Server } from '../helpers/s3rver.ts';
import { startS3rver } from '../helpers/s3rver.ts';
import { startSwift, swiftAvailable } from '../helpers/swift.ts';
import { fuseAvailable } from '../fuse/mount-helpers.ts';
import { tempDir } from '../helpers/tmp.ts';
import { mountS3fs } from './helpers/s3fs-mount.ts';
import { awscli, awscliAvailable, boto3, boto3Python, BUCKET, type Creds, creds, gatewayFor, sdkDefaults } from './helpers/s3-clients.ts';

const MiB = 1024 * 1024;
/** More than one page of a listing (S3 pages at 1,000 keys). */
const MANY = 1001;
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
const python = await boto3Python();
const hasAwscli = awscliAvailable();
const hasS3fs = fuseAvailable().ok && existsSync('/usr/bin/s3fs');

type Op = (typeof MATRIX_OPS)[number];
/** What one client does for each operation; throws when it failed, returns false when it has no such operation. */
type ClientOps = Record<Op, (() => Promise<void>) | undefined>;

interface Fixture {
  readonly gw: string;
  readonly job: Creds;
  readonly dir: string;
  readonly small: Buffer;
  readonly large: Buffer;
  readonly direct: S3Client;
}

function check(cond: boolean, what: string): void {
  if (!cond) throw new Error(what);
}

async function exists(f: Fixture, key: string): Promise<boolean> {
  return f.direct.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key })).then(
    () => true,
    () => false,
  );
}

async function storedIs(f: Fixture, key: string, data: Buffer): Promise<void> {
  const r = await f.direct.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  check(md5(Buffer.from(await r.Body!.transformToByteArray())) === md5(data), `${key} at the store differs from what was sent`);
}

async function fileIs(path: string, data: Buffer): Promise<void> {
  check(md5(await readFile(path)) === md5(data), `${path} differs from the object`);
}

function sdkOps(f: Fixture, c: string): ClientOps {
  const s3 = sdkDefaults(f.gw, f.job);
  const get = async (key: string, range?: string) => {
    const r = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key, Range: range }));
    return Buffer.from(await r.Body!.transformToByteArray());
  };
  return {
    'put small': async () => {
      await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: `run42/${c}/small`, Body: f.small }));
      await storedIs(f, `run42/${c}/small`, f.small);
    },
    'put multipart': async () => {
      const key = `run42/${c}/large`;
      const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key }));
      const parts = [];
      for (const [i, body] of [f.large.subarray(0, 5 * MiB), f.large.subarray(5 * MiB)].entries()) {
        const r = await s3.send(new UploadPartCommand({ Bucket: BUCKET, Key: key, UploadId, PartNumber: i + 1, Body: body }));
        parts.push({ ETag: r.ETag, PartNumber: i + 1 });
      }
      await s3.send(new CompleteMultipartUploadCommand({ Bucket: BUCKET, Key: key, UploadId, MultipartUpload: { Parts: parts } }));
      await storedIs(f, key, f.large);
    },
    'get small': async () => check(md5(await get(`run42/${c}/small`)) === md5(f.small), 'wrong bytes'),
    'get multipart': async () => check(md5(await get(`run42/${c}/large`)) === md5(f.large), 'wrong bytes'),
    'ranged get': async () => check(md5(await get(`run42/${c}/large`, 'bytes=100-5242979')) === md5(f.large.subarray(100, 5_242_980)), 'wrong bytes'),
    head: async () => {
      const h = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: `run42/${c}/large` }));
      check(h.ContentLength === f.large.length, `length ${h.ContentLength}`);
    },
    'ls > 1000 keys': async () => {
      let n = 0;
      let token: string | undefined;
      do {
        const page = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'run42/many/', ContinuationToken: token }));
        n += page.KeyCount ?? 0;
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      check(n === MANY, `listed ${n} keys`);
    },
    sync: undefined,
    rm: async () => {
      await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: `run42/${c}/small` }));
      check(!(await exists(f, `run42/${c}/small`)), 'still there');
    },
  };
}

function boto3Ops(f: Fixture, c: string): ClientOps {
  const run = async (op: string, key: string, arg?: string) => {
    const r = await boto3(python!, f.gw, f.job, op, key, arg);
    if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
    return r;
  };
  return {
    'put small': async () => {
      await run('put-file', `run42/${c}/small`, join(f.dir, 'small'));
      await storedIs(f, `run42/${c}/small`, f.small);
    },
    'put multipart': async () => {
      await run('put-multipart', `run42/${c}/large`, join(f.dir, 'large'));
      await storedIs(f, `run42/${c}/large`, f.large);
    },
    'get small': async () => {
      await run('download', `run42/${c}/small`, join(f.dir, `${c}-small.out`));
      await fileIs(join(f.dir, `${c}-small.out`), f.small);
    },
    'get multipart': async () => {
      await run('download', `run42/${c}/large`, join(f.dir, `${c}-large.out`));
      await fileIs(join(f.dir, `${c}-large.out`), f.large);
    },
    'ranged get': async () => {
      const r = await run('get-range', `run42/${c}/large`, 'bytes=100-5242979');
      check(r.md5 === md5(f.large.subarray(100, 5_242_980)), 'wrong bytes');
    },
    head: async () => check((await run('head', `run42/${c}/large`)).length === f.large.length, 'wrong length'),
    'ls > 1000 keys': async () => check((await run('list', 'run42/many/')).length === MANY, 'wrong count'),
    sync: undefined,
    rm: async () => {
      await run('delete', `run42/${c}/small`);
      check(!(await exists(f, `run42/${c}/small`)), 'still there');
    },
  };
}

function awscliOps(f: Fixture, c: string): ClientOps {
  const cfg = join(f.dir, 'aws-config');
  const run = async (...args: string[]) => {
    const r = await awscli(f.gw, f.job, args, { AWS_CONFIG_FILE: cfg });
    if (r.code !== 0) throw new Error(r.out.trim().split('\n').pop());
    return r.out;
  };
  const s3url = (k: string) => `s3://${BUCKET}/run42/${c}/${k}`;
  return {
    'put small': async () => {
      await run('s3', 'cp', join(f.dir, 'small'), s3url('small'));
      await storedIs(f, `run42/${c}/small`, f.small);
    },
    'put multipart': async () => {
      await run('s3', 'cp', join(f.dir, 'large'), s3url('large'));
      await storedIs(f, `run42/${c}/large`, f.large);
    },
    'get small': async () => {
      await run('s3', 'cp', s3url('small'), join(f.dir, `${c}-small.out`));
      await fileIs(join(f.dir, `${c}-small.out`), f.small);
    },
    'get multipart': async () => {
      await run('s3', 'cp', s3url('large'), join(f.dir, `${c}-large.out`));
      await fileIs(join(f.dir, `${c}-large.out`), f.large);
    },
    'ranged get': async () => {
      const out = join(f.dir, `${c}-range.out`);
      await run('s3api', 'get-object', '--bucket', BUCKET, '--key', `run42/${c}/large`, '--range', 'bytes=100-5242979', out);
      await fileIs(out, f.large.subarray(100, 5_242_980));
    },
    head: async () => {
      const out = await run('s3api', 'head-object', '--bucket', BUCKET, '--key', `run42/${c}/large`);
      check(JSON.parse(out).ContentLength === f.large.length, 'wrong length');
    },
    'ls > 1000 keys': async () => {
      const out = await run('s3', 'ls', `s3://${BUCKET}/run42/many/`);
      check(out.trim().split('\n').length === MANY, 'wrong count');
    },
    sync: async () => {
      await run('s3', 'sync', join(f.dir, 'tree'), `s3://${BUCKET}/run42/${c}/tree/`);
      await run('s3', 'sync', `s3://${BUCKET}/run42/${c}/tree/`, join(f.dir, `${c}-tree`));
      for (const n of ['a', 'b', 'sub/c']) await fileIs(join(f.dir, `${c}-tree`, n), Buffer.from(n));
    },
    rm: async () => {
      await run('s3', 'rm', s3url('small'));
      check(!(await exists(f, `run42/${c}/small`)), 'still there');
    },
  };
}

function rcloneOps(f: Fixture, c: string): ClientOps {
  const env = {
    PATH: process.env.PATH,
    HOME: f.dir,
    RCLONE_CONFIG: join(f.dir, 'rclone.conf'),
    RCLONE_CONFIG_GW_TYPE: 's3',
    RCLONE_CONFIG_GW_PROVIDER: 'Other',
    RCLONE_CONFIG_GW_ENDPOINT: f.gw,
    RCLONE_CONFIG_GW_ACCESS_KEY_ID: f.job.accessKeyId,
    RCLONE_CONFIG_GW_SECRET_ACCESS_KEY: f.job.secretAccessKey,
    RCLONE_CONFIG_GW_SESSION_TOKEN: f.job.sessionToken,
    RCLONE_CONFIG_GW_REGION: 'us-east-1',
    RCLONE_CONFIG_GW_FORCE_PATH_STYLE: 'true',
    // The bucket exists, and a scoped credential may not create or check it.
    RCLONE_CONFIG_GW_NO_CHECK_BUCKET: 'true',
    RCLONE_S3_UPLOAD_CUTOFF: '5M',
    RCLONE_S3_CHUNK_SIZE: '5M',
  };
  const run = (...args: string[]) =>
    new Promise<string>((resolve, reject) => {
      execFile('rclone', ['--retries', '1', '--low-level-retries', '1', ...args], { env, timeout: 120_000 }, (err, stdout, stderr) =>
        err ? reject(new Error(stderr.trim().split('\n').pop())) : resolve(stdout),
      );
    });
  const remote = (k: string) => `gw:${BUCKET}/run42/${c}/${k}`;
  return {
    'put small': async () => {
      await run('copyto', join(f.dir, 'small'), remote('small'));
      await storedIs(f, `run42/${c}/small`, f.small);
    },
    'put multipart': async () => {
      await run('copyto', join(f.dir, 'large'), remote('large'));
      await storedIs(f, `run42/${c}/large`, f.large);
    },
    'get small': async () => {
      await run('copyto', remote('small'), join(f.dir, `${c}-small.out`));
      await fileIs(join(f.dir, `${c}-small.out`), f.small);
    },
    'get multipart': async () => {
      await run('copyto', remote('large'), join(f.dir, `${c}-large.out`));
      await fileIs(join(f.dir, `${c}-large.out`), f.large);
    },
    'ranged get': async () => {
      const out = join(f.dir, `${c}-range.out`);
      await writeFile(out, await runBinary(env, ['cat', '--offset', '100', '--count', '5242880', remote('large')]));
      await fileIs(out, f.large.subarray(100, 5_242_980));
    },
    head: async () => {
      const [entry] = JSON.parse(await run('lsjson', remote('large'))) as { Size: number }[];
      check(entry?.Size === f.large.length, 'wrong length');
    },
    'ls > 1000 keys': async () => {
      const out = await run('lsf', `gw:${BUCKET}/run42/many/`);
      check(out.trim().split('\n').length === MANY, 'wrong count');
    },
    sync: async () => {
      await run('sync', join(f.dir, 'tree'), `gw:${BUCKET}/run42/${c}/tree`);
      await run('sync', `gw:${BUCKET}/run42/${c}/tree`, join(f.dir, `${c}-tree`));
      for (const n of ['a', 'b', 'sub/c']) await fileIs(join(f.dir, `${c}-tree`, n), Buffer.from(n));
    },
    rm: async () => {
      await run('deletefile', remote('small'));
      check(!(await exists(f, `run42/${c}/small`)), 'still there');
    },
  };
}

/** s3fs mounts the bucket's root, as a job mounting its data would; its files are the objects. */
function s3fsOps(f: Fixture, c: string, mnt: () => string): ClientOps {
  const at = (k: string) => join(mnt(), 'run42', c, k);
  return {
    'put small': async () => {
      await mkdir(join(mnt(), 'run42', c), { recursive: true });
      await copyFile(join(f.dir, 'small'), at('small'));
      await storedIs(f, `run42/${c}/small`, f.small);
    },
    'put multipart': async () => {
      await copyFile(join(f.dir, 'large'), at('large'));
      await storedIs(f, `run42/${c}/large`, f.large);
    },
    'get small': async () => fileIs(at('small'), f.small),
    'get multipart': async () => fileIs(at('large'), f.large),
    'ranged get': async () => {
      const fh = await open(at('large'), 'r');
      try {
        const buf = Buffer.alloc(5_242_880);
        const { bytesRead } = await fh.read(buf, 0, buf.length, 100);
        check(bytesRead === buf.length && md5(buf) === md5(f.large.subarray(100, 5_242_980)), 'wrong bytes');
      } finally {
        await fh.close();
      }
    },
    head: async () => check((await stat(at('large'))).size === f.large.length, 'wrong size'),
    'ls > 1000 keys': async () => {
      // Through the bucket's root: the scope's prefix shows as a directory.
      check((await stat(join(mnt(), 'run42'))).isDirectory(), 'run42 is not a directory');
      check((await readdir(join(mnt(), 'run42', 'many'))).length === MANY, 'wrong count');
    },
    sync: undefined,
    rm: async () => {
      await unlink(at('small'));
      check(!(await exists(f, `run42/${c}/small`)), 'still there');
    },
  };
}

function runBinary(env: NodeJS.ProcessEnv, args: string[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile('rclone', args, { env, encoding: 'buffer', maxBuffer: 64 * MiB, timeout: 120_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(stderr.toString().trim().split('\n').pop())) : resolve(stdout),
    );
  });
}

const clients: [string, boolean, (f: Fixture, c: string) => ClientOps][] = [
  ['AWS SDK v3', true, sdkOps],
  ['boto3', python !== undefined, boto3Ops],
  ['awscli 2', hasAwscli, awscliOps],
  ['rclone', true, rcloneOps],
  ['s3fs', hasS3fs, (f, c) => s3fsOps(f, c, () => mountPoint)],
];
/** The s3fs mount of the store being tested; mounted in that test, unmounted at its end. */
let mountPoint = '';

const stores: [string, () => Promise<S3Server>, boolean][] = [
  ['s3rver', () => startS3rver({ buckets: [BUCKET] }), true],
  ['Swift', () => startSwift({ buckets: [BUCKET] }), (await swiftAvailable()).ok],
  ['MinIO', () => startMinio({ buckets: [BUCKET] }), (await minioAvailable()).ok],
];

const results: Matrix = {};
const ran = { all: true };

async function fixture(store: S3Server): Promise<Fixture> {
  const gw = await gatewayFor(store);
  const dir = await tempDir('estuary-matrix-');
  const small = randomBytes(100_000);
  const large = randomBytes(6 * MiB);
  await writeFile(join(dir, 'small'), small);
  await writeFile(join(dir, 'large'), large);
  await mkdir(join(dir, 'tree', 'sub'), { recursive: true });
  for (const n of ['a', 'b', 'sub/c']) await writeFile(join(dir, 'tree', n), n);
  await writeFile(join(dir, 'aws-config'), '[default]\ns3 =\n  multipart_threshold = 5MB\n  multipart_chunksize = 5MB\n');
  const direct = new S3Client({
    endpoint: store.endpoint,
    region: store.region,
    forcePathStyle: true,
    credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const keys = Array.from({ length: MANY }, (_, i) => `run42/many/${String(i).padStart(5, '0')}`);
  for (let i = 0; i < keys.length; i += 50) {
    await Promise.all(keys.slice(i, i + 50).map((Key) => direct.send(new PutObjectCommand({ Bucket: BUCKET, Key, Body: 'x' }))));
  }
  return { gw: gw.url, job: creds([{ bucket: BUCKET, prefix: 'run42/', write: true }]), dir, small, large, direct };
}

for (const [store, start, available] of stores) {
  if (!available) ran.all = false;
  describe.runIf(available)(`client matrix (${store})`, async () => {
    const f = await fixture(await start());
    for (const [client, has, make] of clients) {
      if (!has) ran.all = false;
      it.runIf(has)(client, async () => {
        const mount = client === 's3fs' ? await mountS3fs(f.gw, BUCKET, f.job) : undefined;
        mountPoint = mount?.path ?? '';
        const ops = make(f, client.replace(/\W+/g, '-').toLowerCase());
        const row: Record<string, string> = {};
        for (const op of MATRIX_OPS) {
          const fn = ops[op];
          if (!fn) {
            row[op] = 'n/a';
            continue;
          }
          row[op] = await fn().then(
            () => 'ok',
            (err: Error) => `fails: ${String(err.message ?? err).replace(/\s+/g, ' ').slice(0, 120)}`,
          );
        }
        await mount?.unmount();
        (results[client] ??= {})[store] = row;
        if (process.env.ESTUARY_UPDATE_MATRIX !== '1') {
          const committed = (JSON.parse(readFileSync(MATRIX_FILE, 'utf8')) as Matrix)[client]?.[store];
          expect(row, `${MATRIX_FILE} is not what ${client} does on ${store} now: rerun with ESTUARY_UPDATE_MATRIX=1, then npm run docs`).toEqual(committed);
        }
      }, 120_000);
    }
  });
}

afterAll(() => {
  // Only a run that had every store and client (no -t filter) may rewrite the matrix.
  const complete = clients.every(([c]) => stores.every(([st]) => results[c]?.[st] !== undefined));
  if (ran.all && complete && process.env.ESTUARY_UPDATE_MATRIX === '1') writeFileSync(MATRIX_FILE, `${JSON.stringify(results, null, 2)}\n`);
});
