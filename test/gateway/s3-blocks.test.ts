// Range reads of uncached S3 objects in aligned blocks, against s3rver and Swift, with a counting
// relay between the gateway and the store so upstream fetches are counted at the origin: exact
// bytes for every kind of range, one GET per block for a herd (also across two workers), never a
// mix of two versions when the object is replaced between two block fetches, clients that leave
// mid-range, and `estuary mount` reading a large file through the gateway.

import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { issue } from '../../gateway/s3/credentials.ts';
import { sign } from '../../lib/sigv4.ts';
import { type CountingProxy, startCountingProxy } from '../helpers/counting-proxy.ts';
import type { S3Server } from '../helpers/s3rver.ts';
import { startS3rver } from '../helpers/s3rver.ts';
import { startSwift, swiftAvailable } from '../helpers/swift.ts';
import { tempDir } from '../helpers/tmp.ts';
import { send } from './helpers/client.ts';
import { startGatewayProcess, startTestGateway } from './helpers/gateway.ts';

const ISSUER = 'test-issuer-key-0123456789abcdef0123456789';
const BUCKET = 'kek-data';
const BLOCK = 1024 * 1024;
/** Six blocks, the last one short. */
const SIZE = 5 * BLOCK + 512 * 1024 + 123;
const cred = issue(ISSUER, [{ bucket: BUCKET, prefix: '', write: true }], 3_600_000, Date.now());

function storeClient(store: S3Server): S3Client {
  return new S3Client({
    endpoint: store.endpoint,
    region: store.region,
    forcePathStyle: true,
    credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
  });
}

async function gatewayArgs(store: S3Server, relay: CountingProxy): Promise<string[]> {
  const dir = await tempDir('estuary-gw-blocks-');
  await writeFile(join(dir, 'issuer.key'), ISSUER);
  const keys = { default: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey, region: store.region } };
  await writeFile(join(dir, 'keys.json'), JSON.stringify(keys));
  return ['--s3', `${BUCKET}=${relay.url}`, '--s3-issuer-key-file', join(dir, 'issuer.key'), '--s3-credentials', join(dir, 'keys.json'), '--s3-block-size', String(BLOCK)];
}

function signed(gw: string, key: string, range?: string): Record<string, string> {
  const headers: Record<string, string> = { 'x-amz-security-token': cred.sessionToken };
  if (range) headers.range = range;
  return sign({ method: 'GET', path: `/${BUCKET}/${key}`, query: '', headers, host: new URL(gw).host }, cred, 'us-east-1', 'UNSIGNED-PAYLOAD', Date.now());
}

function get(gw: string, key: string, range?: string) {
  return send(gw, `/${BUCKET}/${key}`, { headers: signed(gw, key, range) });
}

/** The block GETs the store saw for a key, by Range. */
function blockGets(relay: CountingProxy, key: string): string[] {
  return relay.count('GET', `/${BUCKET}/${key}`).map((s) => s.range ?? 'whole');
}

/** Bytes [a, b] as RFC 9110 reads a Range header against `size`. */
function expected(data: Buffer, range: string): Buffer {
  const m = /^bytes=(\d*)-(\d*)$/.exec(range)!;
  if (m[1] === '') return data.subarray(data.length - Number(m[2]));
  return data.subarray(Number(m[1]), m[2] === '' ? data.length : Number(m[2]) + 1);
}

const stores: [string, () => Promise<S3Server>, boolean][] = [
  ['s3rver', () => startS3rver({ buckets: [BUCKET] }), true],
  ['Swift', () => startSwift({ buckets: [BUCKET] }), (await swiftAvailable()).ok],
];

for (const [name, start, available] of stores) {
  describe.runIf(available)(`range reads in aligned blocks (${name})`, async () => {
    const store = await start();
    const direct = storeClient(store);
    const relay = await startCountingProxy(store.endpoint);
    const args = await gatewayArgs(store, relay);
    const flag = (n: string) => args[args.indexOf(n) + 1]!;
    const gw = await startTestGateway({
      s3: [flag('--s3')],
      s3IssuerKeyFile: flag('--s3-issuer-key-file'),
      s3Credentials: flag('--s3-credentials'),
      s3BlockSize: BLOCK,
      // Blocks on disk only here (the two-worker suite keeps them in memory too).
      memObjectMax: 0,
      allowDest: [],
      adminToken: 'blocks-admin-token-1',
    });
    const put = async (key: string, body: Buffer) => {
      await direct.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
    };

    it('answers every kind of range with the exact bytes, fetching each block once', async () => {
      const data = randomBytes(SIZE);
      await put('blocks/a', data);
      const ranges = [
        'bytes=0-0',
        `bytes=${SIZE - 1}-${SIZE - 1}`,
        `bytes=${BLOCK - 10}-${BLOCK + 10}`,
        `bytes=${BLOCK / 2}-${3 * BLOCK + 77}`,
        'bytes=-1000',
        `bytes=-${2 * BLOCK + 5}`,
        `bytes=${4 * BLOCK + 3}-`,
        'bytes=0-',
        `bytes=${SIZE - 5}-${SIZE + 1000}`,
      ];
      for (let i = 0; i < 20; i++) {
        const a = Math.floor(Math.random() * SIZE);
        ranges.push(`bytes=${a}-${a + Math.floor(Math.random() * 3 * BLOCK)}`);
      }
      for (const range of ranges) {
        const r = await get(gw.url, 'blocks/a', range);
        expect(r.status, range).toBe(206);
        expect(r.complete, range).toBe(true);
        expect(r.body.equals(expected(data, range)), range).toBe(true);
        expect(r.headers['content-range'], range).toMatch(new RegExp(`/${SIZE}$`));
      }
      const gets = blockGets(relay, 'blocks/a');
      expect(gets.length).toBe(6);
      expect(new Set(gets).size).toBe(6);
      expect(gets).not.toContain('whole');
      expect(gw.cache.lookup(`s3://${BUCKET}/blocks/a`)).toBeUndefined();
      const unsatisfiable = await get(gw.url, 'blocks/a', `bytes=${SIZE}-`);
      expect(unsatisfiable.status).toBe(416);
      // A whole-object read is fetched whole, once, and later ranges come from it.
      const whole = await get(gw.url, 'blocks/a');
      expect(whole.body.equals(data)).toBe(true);
      expect(blockGets(relay, 'blocks/a').filter((g) => g === 'whole')).toHaveLength(1);
    });

    it('makes one upstream GET per block for a herd of ranged readers on a cold object', async () => {
      const data = randomBytes(SIZE);
      await put('blocks/herd', data);
      const ranges = Array.from({ length: 24 }, (_, i) => `bytes=${(i * 211_111) % SIZE}-${((i * 211_111) % SIZE) + 2 * BLOCK}`);
      const replies = await Promise.all(ranges.map((r) => get(gw.url, 'blocks/herd', r)));
      replies.forEach((r, i) => expect(r.body.equals(expected(data, ranges[i]!)), ranges[i]).toBe(true));
      const gets = blockGets(relay, 'blocks/herd');
      expect(gets.length).toBe(new Set(gets).size);
      expect(gets.length).toBeLessThanOrEqual(6);
      expect(relay.count('HEAD', `/${BUCKET}/blocks/herd`)).toHaveLength(1);
    });

    it('never mixes two versions when the object is replaced between two block fetches', async () => {
      const old = randomBytes(SIZE);
      const fresh = randomBytes(SIZE);
      await put('blocks/changing', old);
      let replaced = false;
      relay.before = async (s) => {
        // The second block's GET finds the object replaced at the store.
        if (!replaced && s.method === 'GET' && s.path.startsWith(`/${BUCKET}/blocks/changing`) && s.range === `bytes=${BLOCK}-${2 * BLOCK - 1}`) {
          replaced = true;
          // Between the fetches: once the first block has arrived. s3rver rewrites an object's
          // file in place, so a GET still reading it stops short of its Content-Length and
          // waits, and the gateway then waits for --response-timeout.
          const firstBlock = relay.seen.find((x) => x.method === 'GET' && x.path.startsWith(`/${BUCKET}/blocks/changing`) && x.range === `bytes=0-${BLOCK - 1}`);
          for (let i = 0; i < 500 && (firstBlock?.bytes ?? 0) < BLOCK; i++) await new Promise((r) => setTimeout(r, 10));
          await put('blocks/changing', fresh);
        }
      };
      const range = `bytes=100-${BLOCK + 100}`;
      const r = await get(gw.url, 'blocks/changing', range);
      relay.before = undefined;
      expect(replaced).toBe(true);
      const want = [expected(old, range), expected(fresh, range)];
      if (r.complete) expect(want.some((w) => w.equals(r.body))).toBe(true);
      else {
        // Cut short: what arrived is a prefix of one version.
        expect(want.some((w) => w.subarray(0, r.body.length).equals(r.body))).toBe(true);
      }
      for (const again of [range, 'bytes=0-', `bytes=${BLOCK - 1}-${BLOCK}`]) {
        const next = await get(gw.url, 'blocks/changing', again);
        expect(next.complete).toBe(true);
        expect(next.body.equals(expected(fresh, again)), again).toBe(true);
      }
    });

    it('keeps fetching for the next reader when a client leaves mid-range', async () => {
      const data = randomBytes(SIZE);
      await put('blocks/abort', data);
      const port = new URL(gw.url).port;
      await new Promise<void>((resolve) => {
        const req = request({ host: '127.0.0.1', port, path: `/${BUCKET}/blocks/abort`, headers: signed(gw.url, 'blocks/abort', 'bytes=10-') }, (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        });
        req.on('error', () => resolve());
        req.end();
      });
      const r = await get(gw.url, 'blocks/abort', 'bytes=10-');
      expect(r.complete).toBe(true);
      expect(r.body.equals(data.subarray(10))).toBe(true);
      const gets = blockGets(relay, 'blocks/abort');
      expect(gets).not.toContain('whole');
      expect(gets.length).toBe(new Set(gets).size);
    });

    it("takes the version from a client's own HEAD instead of asking again", async () => {
      const data = randomBytes(SIZE);
      await put('blocks/headed', data);
      const h = sign({ method: 'HEAD', path: `/${BUCKET}/blocks/headed`, query: '', headers: { 'x-amz-security-token': cred.sessionToken }, host: new URL(gw.url).host }, cred, 'us-east-1', 'UNSIGNED-PAYLOAD', Date.now());
      expect((await send(gw.url, `/${BUCKET}/blocks/headed`, { method: 'HEAD', headers: h })).status).toBe(200);
      const r = await get(gw.url, 'blocks/headed', `bytes=${BLOCK}-${BLOCK + 9}`);
      expect(r.body.equals(data.subarray(BLOCK, BLOCK + 10))).toBe(true);
      expect(relay.count('HEAD', `/${BUCKET}/blocks/headed`)).toHaveLength(1);
      expect(blockGets(relay, 'blocks/headed')).toEqual([`bytes=${BLOCK}-${2 * BLOCK - 1}`]);
    });

    it('answers a range whose If-Match names another version 412 after one fresh HEAD, fetching no block', async () => {
      const data = randomBytes(SIZE);
      await put('blocks/ifmatch', data);
      const first = await get(gw.url, 'blocks/ifmatch', 'bytes=0-9');
      expect(first.body.equals(data.subarray(0, 10))).toBe(true);
      const heads = relay.count('HEAD', `/${BUCKET}/blocks/ifmatch`).length;
      const headers = sign({ method: 'GET', path: `/${BUCKET}/blocks/ifmatch`, query: '', headers: { 'x-amz-security-token': cred.sessionToken, range: `bytes=${BLOCK}-${BLOCK + 9}`, 'if-match': '"0123456789abcdef0123456789abcdef"' }, host: new URL(gw.url).host }, cred, 'us-east-1', 'UNSIGNED-PAYLOAD', Date.now());
      const r = await send(gw.url, `/${BUCKET}/blocks/ifmatch`, { headers });
      expect({ status: r.status, code: /<Code>PreconditionFailed<\/Code>/.test(r.body.toString()) }).toEqual({ status: 412, code: true });
      expect(relay.count('HEAD', `/${BUCKET}/blocks/ifmatch`)).toHaveLength(heads + 1);
      expect(blockGets(relay, 'blocks/ifmatch')).toEqual([`bytes=0-${BLOCK - 1}`]);
      // Its own ETag still gets the range from the blocks.
      const same = sign({ method: 'GET', path: `/${BUCKET}/blocks/ifmatch`, query: '', headers: { 'x-amz-security-token': cred.sessionToken, range: 'bytes=0-9', 'if-match': String(first.headers.etag) }, host: new URL(gw.url).host }, cred, 'us-east-1', 'UNSIGNED-PAYLOAD', Date.now());
      const hit = await send(gw.url, `/${BUCKET}/blocks/ifmatch`, { headers: same });
      expect({ status: hit.status, cs: hit.headers['cache-status'] }).toEqual({ status: 206, cs: expect.stringMatching(/hit; detail=blocks/) });
    });

    it('drops the blocks of a purged prefix', async () => {
      const data = randomBytes(SIZE);
      await put('blocks/purged', data);
      const range = `bytes=${BLOCK - 1}-${BLOCK}`;
      expect((await get(gw.url, 'blocks/purged', range)).body.equals(data.subarray(BLOCK - 1, BLOCK + 1))).toBe(true);
      expect(blockGets(relay, 'blocks/purged')).toHaveLength(2);
      // The client has its bytes a moment before the second block's fill is committed: purge
      // until both blocks were dropped (a fill still in flight is stored when it ends).
      let purged = 0;
      for (let i = 0; purged < 2 && i < 50; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, 20));
        const purge = await send(gw.url, '/estuary/v1/admin/purge', {
          method: 'POST',
          headers: { authorization: 'Bearer blocks-admin-token-1', 'content-type': 'application/json' },
          body: JSON.stringify({ prefix: `s3://${BUCKET}/blocks/purged` }),
        });
        expect(purge.status).toBe(200);
        purged += (JSON.parse(purge.body.toString()) as { purged: number }).purged;
      }
      expect(purged).toBe(2);
      expect((await get(gw.url, 'blocks/purged', range)).body.equals(data.subarray(BLOCK - 1, BLOCK + 1))).toBe(true);
      expect(blockGets(relay, 'blocks/purged')).toHaveLength(4);
    });

    it('sees a write through the gateway at the next ranged read', async () => {
      const one = randomBytes(SIZE);
      const two = randomBytes(SIZE);
      await put('blocks/written', one);
      expect((await get(gw.url, 'blocks/written', 'bytes=0-99')).body.equals(one.subarray(0, 100))).toBe(true);
      const body = two;
      const h = sign({ method: 'PUT', path: `/${BUCKET}/blocks/written`, query: '', headers: { 'x-amz-security-token': cred.sessionToken, 'content-length': String(body.length) }, host: new URL(gw.url).host }, cred, 'us-east-1', 'UNSIGNED-PAYLOAD', Date.now());
      expect((await send(gw.url, `/${BUCKET}/blocks/written`, { method: 'PUT', headers: h, body })).status).toBe(200);
      expect((await get(gw.url, 'blocks/written', 'bytes=0-99')).body.equals(two.subarray(0, 100))).toBe(true);
    });
  });
}

describe('aligned blocks with two workers', async () => {
  const store = await startS3rver({ buckets: [BUCKET] });
  const relay = await startCountingProxy(store.endpoint);
  const gw = await startGatewayProcess([...(await gatewayArgs(store, relay)), '--workers', '2']);

  it('makes one upstream GET per block for a herd spread over both workers', async () => {
    const data = randomBytes(SIZE);
    await storeClient(store).send(new PutObjectCommand({ Bucket: BUCKET, Key: 'w/herd', Body: data }));
    const ranges = Array.from({ length: 16 }, (_, i) => (i % 2 ? `bytes=${i * 1000}-` : `bytes=-${SIZE - i * 7777}`));
    const replies = await Promise.all(ranges.map((r) => get(gw.url, 'w/herd', r)));
    replies.forEach((r, i) => {
      expect(r.complete, ranges[i]).toBe(true);
      expect(r.body.equals(expected(data, ranges[i]!)), ranges[i]).toBe(true);
    });
    const gets = blockGets(relay, 'w/herd');
    expect(gets.length).toBe(6);
    expect(new Set(gets).size).toBe(6);
    expect(await gw.child.stop('SIGTERM')).toBe(0);
  });
});

describe('aligned blocks across a kill -9 of the gateway', async () => {
  const store = await startS3rver({ buckets: [BUCKET] });
  const relay = await startCountingProxy(store.endpoint);
  const args = [...(await gatewayArgs(store, relay)), '--cache-dir', await tempDir('estuary-gw-blocks-kill-')];

  it('cuts the client of a block read short, keeps no partial block, and serves the range whole after a restart', async () => {
    // Larger than loopback's socket buffers hold (several MiB each way): a smaller object can be
    // in the client's buffers whole before the kill, and then nothing is cut.
    const data = randomBytes(48 * BLOCK + 123);
    await storeClient(store).send(new PutObjectCommand({ Bucket: BUCKET, Key: 'kill/blocks', Body: data }));
    const first = await startGatewayProcess(args);
    // Killed once the body is under way (a fixed delay could fall before the headers on a loaded
    // machine, and the client would see no response at all).
    let started!: () => void;
    const underway = new Promise<void>((r) => (started = r));
    const reading = send(first.url, `/${BUCKET}/kill/blocks`, {
      headers: signed(first.url, 'kill/blocks', 'bytes=100-'),
      slowBytesPerMs: 1000,
      onFirstBytes: () => started(),
    });
    await underway;
    await new Promise((r) => setTimeout(r, 200));
    await first.child.stop('SIGKILL');
    const cut = await reading;
    expect(cut.status).toBe(206);
    expect(cut.complete).toBe(false);
    expect(data.subarray(100, 100 + cut.body.length).equals(cut.body)).toBe(true);
    const second = await startGatewayProcess(args);
    const again = await get(second.url, 'kill/blocks', 'bytes=100-');
    expect(again.complete).toBe(true);
    expect(again.body.equals(data.subarray(100))).toBe(true);
    expect(await second.child.stop('SIGTERM')).toBe(0);
  });
});

describe.runIf((await import('../fuse/mount-helpers.ts')).fuseAvailable().ok)('estuary mount reading a large file through aligned blocks', async () => {
  const { runEstuary, sh } = await import('../fuse/mount-helpers.ts');
  const { isMounted } = await import('../../fuse/mount-table.ts');
  const { onTeardown } = await import('../helpers/cleanup.ts');
  const store = await startS3rver({ buckets: [BUCKET] });
  const relay = await startCountingProxy(store.endpoint);
  const gw = await startGatewayProcess(await gatewayArgs(store, relay));

  it('reads every byte right, in ranges served from blocks', async () => {
    const data = randomBytes(12 * BLOCK + 4321);
    await storeClient(store).send(new PutObjectCommand({ Bucket: BUCKET, Key: 'big/file.bin', Body: data }));
    const local = join(await tempDir(), 'file.bin');
    await writeFile(local, data);
    const dir = await tempDir('estuary-mnt-blocks-');
    const env = { ...process.env, AWS_ACCESS_KEY_ID: cred.accessKeyId, AWS_SECRET_ACCESS_KEY: cred.secretAccessKey, AWS_SESSION_TOKEN: cred.sessionToken, AWS_REGION: 'us-east-1' };
    const child = runEstuary(['mount', BUCKET, dir, '--endpoint', gw.url, '--log-format', 'json'], env);
    onTeardown(async () => {
      if (await isMounted(dir)) await sh(`fusermount -uz '${dir}' || umount -l '${dir}'`);
      await child.stop('SIGKILL');
    });
    await child.waitFor(/"msg":"mounted /, 30_000);
    const r = await sh(`cmp '${local}' '${dir}/big/file.bin' && dd if='${dir}/big/file.bin' bs=1 skip=${7 * BLOCK - 3} count=6 status=none | od -An -tx1`);
    expect(r.code, r.out).toBe(0);
    expect(r.out.replace(/\s+/g, '')).toBe(data.subarray(7 * BLOCK - 3, 7 * BLOCK + 3).toString('hex'));
    const gets = blockGets(relay, 'big/file.bin');
    expect(gets.length).toBeGreaterThan(0);
    expect(gets).not.toContain('whole');
    expect(new Set(gets).size).toBe(gets.length);
    expect(await child.stop('SIGTERM', 30_000)).toBe(0);
  });
});
