// The mount's aborts of multipart uploads under faults of the store (docs/SEMANTICS.md,
// "Unfinished multipart uploads"). Through real mounts over MinIO
// behind a relay: an abort carried out but answered past --request-timeout (the resend meets
// NoSuchUpload and counts it done, no warning); 500s and connection resets on the first attempts
// of an abort (its own retries take it); a failed close of a stream and of a staged file (the
// upload is aborted, the writer hears EIO); kill -9 with a refused abort pending, then a start
// with a short --abort-uploads-after (aborted, logged by key); the start-up's abort of uploads
// with odd keys (spaces, +, %, &, <, >, tab, newline, a control character) and of 1500 uploads
// (pagination of the listing, three uploads of one key).

import { join } from 'node:path';
import { CreateMultipartUploadCommand, ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { type MinioServer, minioAvailable } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { INTERNAL, isAbort, logLines, relayedMinio, type Verdict } from './abort-harness.ts';
import { Bucket, eventually } from './hidden-harness.ts';
import { ACCESS_DENIED, driver, O_RDWR_CREAT_TRUNC } from './rmopen-harness.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();
const minio = await minioAvailable();
const MiB = 1024 * 1024;
const NO_SUCH_UPLOAD = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>`;

async function allUploads(bucket: Bucket): Promise<string[]> {
  const out: string[] = [];
  let km: string | undefined;
  let um: string | undefined;
  for (;;) {
    const r = await bucket.s3.send(new ListMultipartUploadsCommand({ Bucket: bucket.name, KeyMarker: km, UploadIdMarker: um }));
    for (const u of r.Uploads ?? []) out.push(u.Key!);
    if (!r.IsTruncated) return out;
    km = r.NextKeyMarker;
    um = r.NextUploadIdMarker;
  }
}

describe.skipIf(!fuse.ok || !minio.ok)('aborts of multipart uploads: what held', () => {
  let server: MinioServer;
  let bucket: Bucket;
  let url: string;
  let decide: (method: string, query: URLSearchParams) => Verdict = () => 'pass';
  beforeAll(async () => {
    let relay;
    ({ server, bucket, relay } = await relayedMinio('abort-held', (m, q) => decide(m, q)));
    url = relay.url;
  }, 30_000);

  const mount = async (extra: string[] = []) =>
    mountBucket({ ...server, endpoint: url }, bucket.name, ['--cache-dir', await tempDir('abort-cache-'), ...extra]);

  /** Streams 20 MiB to `name`, then removes it with the aborts answered by `verdicts` in turn. */
  async function removeStreaming(dir: string, name: string, verdicts: Verdict[]) {
    const cmd = driver();
    const path = join(dir, name);
    expect(await cmd(`open w ${path} ${O_RDWR_CREAT_TRUNC}`)).toBe('OK');
    expect(await cmd(`write w 65 ${20 * MiB} 0`)).toBe('OK');
    expect(await eventually(async () => (await bucket.uploads()).includes(name), 10_000)).toBe(true);
    const plan = [...verdicts];
    decide = (m, q) => (isAbort(m, q) ? (plan.shift() ?? 'pass') : 'pass');
    expect((await sh(`rm '${path}'`, undefined, 20_000)).code).toBe(0);
    expect(await cmd('close w')).toBe('OK');
  }

  it('an abort answered past --request-timeout: the resend meets NoSuchUpload, counted done', async () => {
    const m = await mount(['--request-timeout', '1s', '--retries', '3']);
    // MinIO answers a second abort 204; AWS answers NoSuchUpload, as the relay does here.
    await removeStreaming(m.dir, 'late', [{ lateMs: 2500 }, { status: 404, body: NO_SUCH_UPLOAD }]);
    await new Promise((r) => setTimeout(r, 4000));
    expect(await bucket.uploads()).not.toContain('late');
    expect(await m.child.stop('SIGTERM', 30_000)).toBe(0);
    expect(logLines(m.child.output()).filter((l) => JSON.stringify(l).includes('late'))).toEqual([]);
  }, 30_000);

  it('500s and resets on the first attempts: the abort\'s own retries take it', async () => {
    const m = await mount(['--request-timeout', '2s', '--retries', '4']);
    await removeStreaming(m.dir, 'errors', [{ status: 500, body: INTERNAL }, 'reset', { status: 500, body: INTERNAL }]);
    expect(await eventually(async () => !(await bucket.uploads()).includes('errors'), 10_000)).toBe(true);
    expect(await m.child.stop('SIGTERM', 30_000)).toBe(0);
  }, 30_000);

  it('a failed close of a stream and of a staged file: EIO, and the upload is aborted', async () => {
    const m = await mount(['--request-timeout', '1s', '--retries', '2']);
    const cmd = driver();
    expect(await cmd(`open s ${join(m.dir, 'stream')} ${O_RDWR_CREAT_TRUNC}`)).toBe('OK');
    expect(await cmd(`write s 65 ${20 * MiB} 0`)).toBe('OK');
    expect(await cmd(`open t ${join(m.dir, 'staged')} ${O_RDWR_CREAT_TRUNC}`)).toBe('OK');
    expect(await cmd(`write t 65 ${40 * MiB} ${MiB}`)).toBe('OK'); // out of order: a staging file
    decide = (m2, q) => (m2 === 'PUT' && q.get('partNumber') === '2' ? { status: 500, body: INTERNAL } : 'pass');
    const s = [await cmd(`write s 66 ${20 * MiB} ${20 * MiB}`), await cmd('close s')];
    expect(s).toContain('ERR Input/output error');
    expect(await cmd('close t')).toBe('ERR Input/output error');
    decide = () => 'pass';
    // Aborted in the background, at once: the close does not wait for it.
    expect(await eventually(async () => (await bucket.uploads()).length === 0, 5000)).toBe(true);
    expect(await m.child.stop('SIGTERM', 30_000)).toBe(0);
  }, 40_000);

  it('kill -9 with a refused abort pending; the next start with --abort-uploads-after 1s aborts it', async () => {
    const m = await mount();
    await removeStreaming(m.dir, 'killed', Array(10).fill({ status: 403, body: ACCESS_DENIED }));
    await m.child.stop('SIGKILL');
    await sh(`fusermount -uz '${m.dir}'`);
    decide = () => 'pass';
    expect(await bucket.uploads()).toContain('killed');
    await new Promise((r) => setTimeout(r, 1100));
    const next = await mount(['--abort-uploads-after', '1s']);
    await next.child.waitFor(/aborted unfinished multipart uploads/, 15_000);
    expect(await bucket.uploads()).not.toContain('killed');
    expect(next.child.output()).toMatch(/"keys":\[[^\]]*"killed"/);
    const code = await next.child.stop('SIGTERM', 30_000);
    expect(code, next.child.output().slice(-4000)).toBe(0);
  }, 40_000);

  it('the start-up abort takes odd keys and 1500 uploads (three of one key)', async () => {
    const odd = new Bucket(server, `abort-odd-${process.pid}`);
    await odd.create();
    const keys = ['a b+c%20d/ü.txt', 'x&y<z>', 'tab\there', 'nl\nhere', 'ctl\x01x', 'sp ', 'q?x=1#f', "it's"];
    for (const k of keys) await odd.s3.send(new CreateMultipartUploadCommand({ Bucket: odd.name, Key: k }));
    for (let i = 0; i < 1500; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          odd.s3.send(new CreateMultipartUploadCommand({ Bucket: odd.name, Key: `k/${String(i + j).padStart(5, '0')}` })),
        ),
      );
    }
    for (let j = 0; j < 3; j++) await odd.s3.send(new CreateMultipartUploadCommand({ Bucket: odd.name, Key: 'same' }));
    expect((await allUploads(odd)).length).toBe(1511);
    await new Promise((r) => setTimeout(r, 1100));
    const m = await mountBucket(server, odd.name, ['--cache-dir', await tempDir('abort-cache-'), '--abort-uploads-after', '1s']);
    await m.child.waitFor(/aborted unfinished multipart uploads/, 30_000);
    expect(await allUploads(odd)).toEqual([]);
    expect(m.child.output()).toContain('"aborted":1511');
    expect(await m.child.stop('SIGTERM', 30_000)).toBe(0);
  }, 50_000);
});
