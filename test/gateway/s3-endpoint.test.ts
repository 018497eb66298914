// The gateway as an S3 endpoint, with the AWS SDK as the client and real stores behind it (s3rver
// and OpenStack Swift's S3 API): every operation the mount and the CLIs need, reads served from the
// cache, writes invalidating it, and every refusal answered with the S3 code a client expects and
// nothing reaching the store.

import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { issue, type Scope } from '../../gateway/s3/credentials.ts';
import type { S3Server } from '../helpers/s3rver.ts';
import { startS3rver } from '../helpers/s3rver.ts';
import { startSwift, swiftAvailable } from '../helpers/swift.ts';
import { tempDir } from '../helpers/tmp.ts';
import { startTestGateway } from './helpers/gateway.ts';

const ISSUER = 'test-issuer-key-0123456789abcdef0123456789';
const BUCKET = 'kek-data';
const ADMIN = 'prefetch-admin-token-1';

function client(endpoint: string, creds: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }, offsetMs = 0): S3Client {
  const c = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: creds,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 1,
  });
  if (offsetMs) c.config.systemClockOffset = offsetMs;
  return c;
}

function creds(scopes: Scope[], ttlMs = 3_600_000, now = Date.now(), key = ISSUER) {
  const c = issue(key, scopes, ttlMs, now);
  return { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey, sessionToken: c.sessionToken };
}

async function text(body: unknown): Promise<string> {
  return (body as { transformToString(): Promise<string> }).transformToString();
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return (err as { name?: string }).name ?? String(err);
  }
}

async function gatewayFor(store: S3Server, revalidate = '60s') {
  const dir = await tempDir('estuary-gw-s3-');
  await writeFile(join(dir, 'issuer.key'), ISSUER);
  await writeFile(
    join(dir, 'keys.json'),
    JSON.stringify({ default: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey, region: store.region } }),
  );
  return startTestGateway({
    s3: [`${BUCKET}=${store.endpoint}`],
    s3IssuerKeyFile: join(dir, 'issuer.key'),
    s3Credentials: join(dir, 'keys.json'),
    s3Revalidate: revalidate,
    allowDest: [],
    adminToken: ADMIN,
  });
}

const stores: [string, () => Promise<S3Server>, boolean][] = [
  ['s3rver', () => startS3rver({ buckets: [BUCKET] }), true],
  ['Swift', () => startSwift({ buckets: [BUCKET] }), (await swiftAvailable()).ok],
];

for (const [name, start, available] of stores) {
  describe.runIf(available)(`S3 endpoint in front of ${name}`, async () => {
    const store = await start();
    const gw = await gatewayFor(store, '1s');
    const rw = client(gw.url, creds([{ bucket: BUCKET, prefix: '', write: true }]));
    const direct = client(store.endpoint, { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey });

    it('puts, gets (then from the cache), heads, ranges and lists', async () => {
      await rw.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'run42/a b+c.txt', Body: 'hello estuary' }));
      const first = await rw.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'run42/a b+c.txt' }));
      expect(await text(first.Body)).toBe('hello estuary');
      expect(gw.cache.lookup(`s3://${BUCKET}/run42/a b+c.txt`)).toBeDefined();
      const again = await rw.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'run42/a b+c.txt' }));
      expect(await text(again.Body)).toBe('hello estuary');
      expect(gw.metrics.registry.getSingleMetric('estuary_gateway_cache_hits_total')).toBeDefined();
      const head = await rw.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'run42/a b+c.txt' }));
      expect(head.ContentLength).toBe(13);
      const range = await rw.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'run42/a b+c.txt', Range: 'bytes=6-12' }));
      expect(await text(range.Body)).toBe('estuary');
      const list = await rw.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'run42/' }));
      expect(list.Contents?.map((c) => c.Key)).toContain('run42/a b+c.txt');
      // What the agent forwards in its heartbeats: discovery can tell which gateway holds the dataset.
      const summary = (await fetch(`${gw.url}/estuary/v1/summary`).then((r) => r.json())) as { prefixes: { prefix: string }[] };
      expect(summary.prefixes.map((p) => p.prefix)).toContain(`s3://${BUCKET}/run42`);
    });

    it('uploads in parts, copies and deletes, and the cache follows every write', async () => {
      const part = randomBytes(5 * 1024 * 1024);
      const up = await rw.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'run42/big' }));
      const parts = [];
      for (let n = 1; n <= 2; n++) {
        const r = await rw.send(new UploadPartCommand({ Bucket: BUCKET, Key: 'run42/big', UploadId: up.UploadId, PartNumber: n, Body: part }));
        parts.push({ ETag: r.ETag, PartNumber: n });
      }
      await rw.send(new CompleteMultipartUploadCommand({ Bucket: BUCKET, Key: 'run42/big', UploadId: up.UploadId, MultipartUpload: { Parts: parts } }));
      const big = await rw.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'run42/big' }));
      const got = Buffer.from(await (big.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray());
      expect(got.equals(Buffer.concat([part, part]))).toBe(true);

      await rw.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'run42/v', Body: 'one' }));
      expect(await text((await rw.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'run42/v' }))).Body)).toBe('one');
      await rw.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'run42/v', Body: 'two' }));
      expect(await text((await rw.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'run42/v' }))).Body)).toBe('two');

      await rw.send(new CopyObjectCommand({ Bucket: BUCKET, Key: 'run42/v-copy', CopySource: `${BUCKET}/run42/v` }));
      expect(await text((await rw.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'run42/v-copy' }))).Body)).toBe('two');

      await rw.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'run42/v' }));
      expect(await codeOf(rw.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'run42/v' })))).toBe('NoSuchKey');
    });

    it('answers virtual-host addressing (bucket.gateway/key) like path style', async () => {
      const { send } = await import('./helpers/client.ts');
      const { sign } = await import('../../lib/sigv4.ts');
      const c = creds([{ bucket: BUCKET, prefix: 'run42/', write: false }]);
      const host = `${BUCKET}.gateway.test:${new URL(gw.url).port}`;
      const headers = sign({ method: 'GET', path: '/run42/a%20b%2Bc.txt', query: '', headers: { 'x-amz-security-token': c.sessionToken }, host }, c, 'us-east-1', 'UNSIGNED-PAYLOAD', Date.now());
      const r = await send(gw.url, '/run42/a%20b%2Bc.txt', { headers });
      expect(r.status, r.body.toString()).toBe(200);
      expect(r.body.toString()).toBe('hello estuary');
    });

    it('revalidates by ETag after --s3-revalidate when the object changed at the store', async () => {
      await rw.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'run42/changing', Body: 'old' }));
      expect(await text((await rw.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'run42/changing' }))).Body)).toBe('old');
      await direct.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'run42/changing', Body: 'new' }));
      await new Promise((r) => setTimeout(r, 2300));
      expect(await text((await rw.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'run42/changing' }))).Body)).toBe('new');
    });

    it('lists the bucket root filtered to what a prefix credential may see', async () => {
      await direct.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'secret/plan.txt', Body: 'x' }));
      await direct.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'top-level.txt', Body: 'x' }));
      const ro = client(gw.url, creds([{ bucket: BUCKET, prefix: 'run42/', write: false }]));
      const flat = await ro.send(new ListObjectsV2Command({ Bucket: BUCKET }));
      const keys = (flat.Contents ?? []).map((c) => c.Key!);
      expect(keys.length).toBeGreaterThan(0);
      expect(keys.every((k) => k.startsWith('run42/'))).toBe(true);
      expect(flat.KeyCount).toBe(keys.length);
      const tree = await ro.send(new ListObjectsV2Command({ Bucket: BUCKET, Delimiter: '/' }));
      expect((tree.CommonPrefixes ?? []).map((p) => p.Prefix)).toEqual(['run42/']);
      expect(tree.Contents ?? []).toEqual([]);
    });

    it('refuses with the S3 code clients expect, and nothing reaches the store', async () => {
      const ro = client(gw.url, creds([{ bucket: BUCKET, prefix: 'run42/', write: false }]));
      expect(await codeOf(ro.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'run42/denied', Body: 'x' })))).toBe('AccessDenied');
      expect(await codeOf(ro.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'other/x' })))).toBe('AccessDenied');
      const otherBucket = client(gw.url, creds([{ bucket: 'other-bucket', prefix: '', write: true }]));
      expect(await codeOf(otherBucket.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: '' })))).toBe('AccessDenied');
      const expired = client(gw.url, creds([{ bucket: BUCKET, prefix: '', write: true }], 60_000, Date.now() - 120_000));
      expect(await codeOf(expired.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'run42/denied', Body: 'x' })))).toBe('ExpiredToken');
      const good = creds([{ bucket: BUCKET, prefix: '', write: true }]);
      const badSecret = client(gw.url, { ...good, secretAccessKey: 'x'.repeat(40) });
      expect(await codeOf(badSecret.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'run42/denied', Body: 'x' })))).toBe('SignatureDoesNotMatch');
      const skewed = client(gw.url, good, 20 * 60_000);
      expect(await codeOf(skewed.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'run42/denied', Body: 'x' })))).toBe('RequestTimeTooSkewed');
      const foreign = client(gw.url, creds([{ bucket: BUCKET, prefix: '', write: true }], 3_600_000, Date.now(), 'another-issuer-key-0123456789abcdef012'));
      expect(await codeOf(foreign.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'run42/denied', Body: 'x' })))).toBe('InvalidToken');
      const siteKeys = client(gw.url, { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey });
      expect(await codeOf(siteKeys.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'run42/denied', Body: 'x' })))).toBe('InvalidAccessKeyId');
      const partial = client(gw.url, creds([{ bucket: BUCKET, prefix: 'run42/', write: true }]));
      // As S3 answers a batch with keys the caller may not delete: one AccessDenied per such key.
      const batch = await partial.send(new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: [{ Key: 'run42/never-there' }, { Key: 'elsewhere' }] } }));
      expect(batch.Errors?.map((e) => [e.Key, e.Code])).toEqual([['elsewhere', 'AccessDenied']]);
      expect(await codeOf(direct.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'run42/denied' })))).toBe('NotFound');
      expect(await codeOf(direct.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'run42/a b+c.txt' })))).toBe('ok');
    });
  });
}

describe.runIf((await import('../fuse/mount-helpers.ts')).fuseAvailable().ok)('estuary mount through the S3 endpoint', async () => {
  const { runEstuary, sh } = await import('../fuse/mount-helpers.ts');
  const { isMounted } = await import('../../fuse/mount-table.ts');
  const { onTeardown } = await import('../helpers/cleanup.ts');
  const store = await startS3rver({ buckets: [BUCKET] });
  const gw = await gatewayFor(store);

  it('copies a file in and reads it back with an issued credential only', async () => {
    const c = creds([{ bucket: BUCKET, prefix: '', write: true }]);
    const dir = await tempDir('estuary-mnt-gw-');
    const env = {
      ...process.env,
      AWS_ACCESS_KEY_ID: c.accessKeyId,
      AWS_SECRET_ACCESS_KEY: c.secretAccessKey,
      AWS_SESSION_TOKEN: c.sessionToken,
      AWS_REGION: 'us-east-1',
    };
    const child = runEstuary(['mount', BUCKET, dir, '--endpoint', gw.url, '--log-format', 'json'], env);
    onTeardown(async () => {
      if (await isMounted(dir)) await sh(`fusermount -uz '${dir}' || umount -l '${dir}'`);
      await child.stop('SIGKILL');
    });
    await child.waitFor(/"msg":"mounted /, 30_000);
    const data = randomBytes(300_000);
    const src = join(await tempDir(), 'in.bin');
    await writeFile(src, data);
    const r = await sh(`cp '${src}' '${dir}/through-gateway.bin' && cmp '${src}' '${dir}/through-gateway.bin' && ls -l '${dir}'`);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/through-gateway\.bin/);
    const direct = client(store.endpoint, { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey });
    const got = await direct.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'through-gateway.bin' }));
    const bytes = Buffer.from(await (got.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray());
    expect(bytes.equals(data)).toBe(true);
    expect(await child.stop('SIGTERM', 30_000)).toBe(0);
  });
});

describe('estuary gateway credentials issue', async () => {
  const { NODE, startChild } = await import('../helpers/process.ts');
  const store = await startS3rver({ buckets: [BUCKET] });
  const gw = await gatewayFor(store);
  const keyFile = join(await tempDir(), 'issuer.key');
  await writeFile(keyFile, ISSUER);
  const cli = async (args: string[]) => {
    const child = startChild(NODE, ['bin/estuary.js', 'gateway', 'credentials', ...args], {
      cwd: new URL('../../', import.meta.url).pathname,
    });
    const code = await child.exited;
    return { code, out: child.output() };
  };

  it('prints a credential the endpoint accepts, within its prefix only', async () => {
    const r = await cli(['issue', '--prefix', `${BUCKET}/cli/`, '--write', '--ttl', '1h', '--issuer-key-file', keyFile]);
    expect(r.code, r.out).toBe(0);
    const c = JSON.parse(r.out) as { Version: number; AccessKeyId: string; SecretAccessKey: string; SessionToken: string; Expiration: string };
    expect(c.Version).toBe(1);
    expect(Date.parse(c.Expiration) - Date.now()).toBeGreaterThan(3_500_000);
    const s3 = client(gw.url, { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken });
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'cli/ok', Body: 'fine' }));
    expect(await text((await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'cli/ok' }))).Body)).toBe('fine');
    expect(await codeOf(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'elsewhere', Body: 'no' })))).toBe('AccessDenied');
  });

  it('says in one line what is missing', async () => {
    const noPrefix = await cli(['issue', '--issuer-key-file', keyFile]);
    expect(noPrefix.code).toBe(2);
    expect(noPrefix.out.trim().split('\n')).toHaveLength(1);
    expect(noPrefix.out).toMatch(/^estuary: .*--prefix/);
    const noKey = await cli(['issue', '--prefix', BUCKET]);
    expect(noKey.code).toBe(2);
    expect(noKey.out).toMatch(/--issuer-key-file is required/);
  });
});

describe('admin prefetch of S3 objects and prefixes', async () => {
  const { send } = await import('./helpers/client.ts');
  const store = await startS3rver({ buckets: [BUCKET] });
  const gw = await gatewayFor(store);
  const direct = client(store.endpoint, { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey });
  const prefetch = async (urls: unknown) => {
    const r = await send(gw.url, '/estuary/v1/admin/prefetch', {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ urls }),
    });
    return { status: r.status, body: JSON.parse(r.body.toString()) as Record<string, unknown> };
  };

  it('fetches a whole prefix ahead of use, once, and says what it did', async () => {
    for (const k of ['pf/1', 'pf/2', 'pf/sub/3', 'other/4']) {
      await direct.send(new PutObjectCommand({ Bucket: BUCKET, Key: k, Body: `body of ${k}` }));
    }
    const r = await prefetch([`s3://${BUCKET}/pf/`, 's3://not-served/x']);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ stored: 3, cached: 0, failed: 1 });
    for (const k of ['pf/1', 'pf/2', 'pf/sub/3']) expect(gw.cache.lookup(`s3://${BUCKET}/${k}`), k).toBeDefined();
    expect(gw.cache.lookup(`s3://${BUCKET}/other/4`)).toBeUndefined();
    const again = await prefetch([`s3://${BUCKET}/pf/1`]);
    expect(again.body).toMatchObject({ stored: 0, cached: 1 });
    const reader = client(gw.url, creds([{ bucket: BUCKET, prefix: 'pf/', write: false }]));
    expect(await text((await reader.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'pf/sub/3' }))).Body)).toBe('body of pf/sub/3');
  });

  it('refuses a malformed request with 400', async () => {
    expect((await prefetch('s3://x')).status).toBe(400);
    expect((await prefetch([])).status).toBe(400);
  });
});

describe('real S3 tools through the endpoint', async () => {
  const { sh } = await import('../fuse/mount-helpers.ts');
  const store = await startS3rver({ buckets: [BUCKET] });
  const gw = await gatewayFor(store);
  const c = creds([{ bucket: BUCKET, prefix: 'tools/', write: true }]);
  const direct = client(store.endpoint, { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey });
  const work = await tempDir('estuary-gw-tools-');
  const data = randomBytes(7 * 1024 * 1024 + 5);
  await mkdir(join(work, 'src', 'sub'), { recursive: true });
  await writeFile(join(work, 'src', 'sub', 'data.bin'), data);
  const stored = async (key: string) => {
    const got = await direct.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    return Buffer.from(await (got.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray());
  };

  it('rclone copies a tree up and back with the session token', async () => {
    const conf = join(work, 'rclone.conf');
    await writeFile(
      conf,
      ['[gw]', 'type = s3', 'provider = Other', `endpoint = ${gw.url}`, 'region = us-east-1', 'force_path_style = true',
        `access_key_id = ${c.accessKeyId}`, `secret_access_key = ${c.secretAccessKey}`, `session_token = ${c.sessionToken}`, ''].join('\n'),
      { mode: 0o600 },
    );
    // rclone 1.60 refuses to start when AWS_CA_BUNDLE is set.
    const env = 'env -u AWS_CA_BUNDLE';
    const up = await sh(`${env} rclone copy --config '${conf}' '${work}/src' gw:${BUCKET}/tools/rc`);
    expect(up.code, up.out).toBe(0);
    expect((await stored('tools/rc/sub/data.bin')).equals(data)).toBe(true);
    const down = await sh(`${env} rclone copy --config '${conf}' gw:${BUCKET}/tools/rc '${work}/back' && cmp '${work}/src/sub/data.bin' '${work}/back/sub/data.bin'`);
    expect(down.code, down.out).toBe(0);
    const denied = await sh(`${env} rclone copy --config '${conf}' '${work}/src' gw:${BUCKET}/elsewhere`);
    expect(denied.code).not.toBe(0);
    expect(denied.out).toMatch(/AccessDenied/);
  });

  it.runIf((await import('../fuse/mount-helpers.ts')).fuseAvailable().ok)('s3fs mounts it, writes and reads back', async () => {
    const { startChild } = await import('../helpers/process.ts');
    const { isMounted } = await import('../../fuse/mount-table.ts');
    const { onTeardown } = await import('../helpers/cleanup.ts');
    const mnt = await tempDir('estuary-gw-s3fs-');
    const env = { ...process.env, AWSACCESSKEYID: c.accessKeyId, AWSSECRETACCESSKEY: c.secretAccessKey, AWSSESSIONTOKEN: c.sessionToken };
    const child = startChild('s3fs', [`${BUCKET}:/tools`, mnt, '-f', '-o', `url=${gw.url}`, '-o', 'use_path_request_style', '-o', 'endpoint=us-east-1'], { env });
    onTeardown(async () => {
      if (await isMounted(mnt)) await sh(`fusermount -uz '${mnt}' || umount -l '${mnt}'`);
      await child.stop('SIGKILL');
    });
    for (let i = 0; i < 100 && !(await isMounted(mnt)); i++) await new Promise((r) => setTimeout(r, 100));
    expect(await isMounted(mnt), child.output()).toBe(true);
    const r = await sh(`cp '${work}/src/sub/data.bin' '${mnt}/s3fs.bin' && cmp '${work}/src/sub/data.bin' '${mnt}/s3fs.bin' && ls '${mnt}'`);
    expect(r.code, `${r.out}\n${child.output()}`).toBe(0);
    expect((await stored('tools/s3fs.bin')).equals(data)).toBe(true);
    await sh(`fusermount -u '${mnt}'`);
  });
});

for (const [name, start, available] of stores) {
  describe.runIf(available)(`kill -9 of the gateway in the middle of S3 transfers (${name})`, async () => {
    const { startGatewayProcess } = await import('./helpers/gateway.ts');
    const { send } = await import('./helpers/client.ts');
    const { sign } = await import('../../lib/sigv4.ts');
    const { Readable } = await import('node:stream');
    const store = await start();
    const dir = await tempDir('estuary-gw-s3-kill-');
    await writeFile(join(dir, 'issuer.key'), ISSUER);
    const keys = { default: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey, region: store.region } };
    await writeFile(join(dir, 'keys.json'), JSON.stringify(keys));
    const args = ['--s3', `${BUCKET}=${store.endpoint}`, '--s3-issuer-key-file', join(dir, 'issuer.key'), '--s3-credentials', join(dir, 'keys.json'), '--cache-dir', join(dir, 'cache')];
    const c = creds([{ bucket: BUCKET, prefix: '', write: true }]);
    const direct = client(store.endpoint, { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey });
    const bytesOf = async (key: string) => {
      const r = await direct.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
      return Buffer.from(await (r.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray());
    };

    // s3rver keeps whatever part of a body arrived when its client is cut off (a store bug: S3 and
    // Swift store nothing of an incomplete request), so this one runs against Swift only.
    (name === 'Swift' ? it : () => undefined)('leaves the old object in the store when the gateway dies mid-upload, and the client sees an error', async () => {
      const old = Buffer.from('the old object');
      await direct.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'kill/up', Body: old }));
      const gw = await startGatewayProcess(args);
      const size = 20 * 1024 * 1024;
      let sent = 0;
      const slow = new Readable({
        read() {
          if (sent >= size) return void this.push(null);
          sent += 1024 * 1024;
          setTimeout(() => this.push(Buffer.alloc(1024 * 1024, 7)), 40);
        },
      });
      const put = codeOf(client(gw.url, c).send(new PutObjectCommand({ Bucket: BUCKET, Key: 'kill/up', Body: slow, ContentLength: size })));
      await new Promise((r) => setTimeout(r, 300));
      await gw.child.stop('SIGKILL');
      expect(await put).not.toBe('ok');
      expect((await bytesOf('kill/up')).equals(old)).toBe(true);
    });

    it('never serves a partial object after the gateway died mid-download', async () => {
      const big = randomBytes(16 * 1024 * 1024);
      await direct.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'kill/down', Body: big }));
      const first = await startGatewayProcess(args);
      const port = new URL(first.url).port;
      const signedGet = () =>
        sign({ method: 'GET', path: `/${BUCKET}/kill/down`, query: '', headers: { 'x-amz-security-token': c.sessionToken }, host: `127.0.0.1:${port}` }, c, 'us-east-1', 'UNSIGNED-PAYLOAD', Date.now());
      // A slow reader: the gateway is killed long before 16 MiB have gone out at 2 MB/s.
      const reading = send(first.url, `/${BUCKET}/kill/down`, { headers: signedGet(), slowBytesPerMs: 2000 });
      await new Promise((r) => setTimeout(r, 500));
      await first.child.stop('SIGKILL');
      const cut = await reading;
      expect(cut.status).toBe(200);
      expect(cut.complete).toBe(false);
      expect(cut.body.length).toBeLessThan(big.length);
      const second = await startGatewayProcess(args);
      const again = await client(second.url, c).send(new GetObjectCommand({ Bucket: BUCKET, Key: 'kill/down' }));
      const bytes = Buffer.from(await (again.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray());
      expect(bytes.equals(big)).toBe(true);
      expect(await second.child.stop('SIGTERM')).toBe(0);
    });
  });
}
