// Attack: every control call of the mount's own S3 client (HEAD, ListObjectsV2 with
// encoding-type=url, CopyObject with and without new metadata, Create/UploadPartCopy/Complete,
// DeleteObject, DeleteObjects, ListMultipartUploads, Abort) on keys the world has: `+`, `%`,
// spaces, `!'()*`, `~`, unicode, control characters, doubled and trailing slashes — against MinIO,
// which checks every signature as AWS does. A key that signs wrongly is a file that cannot be
// renamed, listed or deleted.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Filesystem } from '../../../fuse/fs/filesystem.ts';
import { S3ObjectClient } from '../../../fuse/s3/s3-client.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable, type MinioServer, startMinio } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);

const available = await minioAvailable();

const KEYS = [
  'a+b',
  'a%b',
  'a%2Fb',
  'a b',
  "it's (1)!*",
  'tilde~x',
  'café/naïve ☃ 𝄞',
  'ctl\u0001\u001b\u007fend',
  'tab\there',
  'semi;colon,comma=eq&amp?q#h',
  'sp ace/ ',
  '[brackets]{braces}^`|\\"<>',
];

describe.runIf(available.ok)('control calls on hostile keys, signed for MinIO', () => {
  let server: MinioServer;
  let client: S3ObjectClient;

  beforeAll(async () => {
    server = await startMinio({ buckets: ['bkt'] });
    client = new S3ObjectClient({
      bucket: 'bkt',
      endpoint: server.endpoint,
      region: server.region,
      maxAttempts: 2,
      idleTimeoutMs: 10_000,
      maxSockets: 4,
      credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
    });
    onTeardown(() => client.destroy());
  }, 60_000);

  for (const key of KEYS) {
    it(`round trip of ${JSON.stringify(key)}`, async () => {
      const dir = `t${KEYS.indexOf(key)}/`;
      await client.put(dir + key, Buffer.from('x'.repeat(10)), { metadata: { mode: '33188' } });
      expect((await client.head(dir + key))?.size).toBe(10);
      const listed = await client.list(dir);
      expect(listed.objects.map((o) => o.key)).toEqual([dir + key]);
      const slashed = await client.list(dir, { delimiter: '/' });
      expect([...slashed.objects.map((o) => o.key), ...slashed.prefixes].length).toBeGreaterThan(0);
      await client.copy(dir + key, `${dir + key}.copy`);
      await client.copy(dir + key, `${dir + key}.meta`, { metadata: { mode: '33261', note: 'plain' }, contentType: 'text/plain' });
      expect((await client.head(`${dir + key}.meta`))?.metadata.mode).toBe('33261');
      const id = await client.createMultipart(`${dir + key}.mp`, { metadata: { mode: '33188' } });
      const etag = await client.uploadPartCopy(`${dir + key}.mp`, id, 1, dir + key, { start: 0, end: 10 });
      // MinIO lists the uploads of one key only, not of a prefix.
      const pending = await client.listUploads(`${dir + key}.mp`);
      expect(pending.map((u) => u.key)).toContain(`${dir + key}.mp`);
      await client.completeMultipart(`${dir + key}.mp`, id, [{ partNumber: 1, etag }]);
      expect((await client.head(`${dir + key}.mp`))?.size).toBe(10);
      await client.delete(`${dir + key}.copy`);
      await client.delete(dir + key);
      await client.deleteMany([`${dir + key}.meta`, `${dir + key}.mp`].filter((k) => !/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(k)));
      for (const k of [`${dir + key}.meta`, `${dir + key}.mp`]) await client.delete(k);
      expect((await client.list(dir)).objects).toEqual([]);
    });
  }

  // Expected: DeleteObjects of a batch holding a key with a control character (which XML 1.0
  // cannot carry, not even as &#x1;) deletes every key of the batch, those one by one with
  // DeleteObject. Today the whole batch is refused (MalformedXML) and nothing is deleted: a
  // directory rename has then copied every object and deletes none of the originals.
  it('deleteMany of a batch with a key XML cannot carry deletes all of it', async () => {
    const keys = ['del/plain', 'del/ctl\u0001x', 'del/esc\u001b[31mred'];
    for (const k of keys) await client.put(k, Buffer.from('x'));
    await client.deleteMany(keys);
    expect((await client.list('del/')).objects.map((o) => o.key)).toEqual([]);
  });

  // Holds today: metadata stored as UTF-8 bytes (as the AWS SDKs send `café`) comes back from a
  // HEAD as the server spells it (MinIO: RFC 2047) and survives a copy that replaces it (a rename or chmod).
  it('UTF-8 metadata survives a copy with REPLACE', async () => {
    const note = Buffer.from('café ☃', 'utf8').toString('latin1');
    await client.put('meta/src', Buffer.from('x'), { metadata: { note, mode: '33188' } });
    const head = await client.head('meta/src');
    await client.copy('meta/src', 'meta/dst', { metadata: { ...head!.metadata, mode: '33261' } });
    expect((await client.head('meta/dst'))?.metadata).toMatchObject({ note: head!.metadata.note, mode: '33261' });
  });

  // What the refused batch does to a user: `mv dir other` copies every object under dir, then
  // deletes none of the originals, and answers EIO. Expected: the directory moved, as for any
  // other names (docs/SEMANTICS.md: control characters "are names like any other").
  it('renaming a directory holding a key with a control character moves it', async () => {
    for (const k of ['mv/from/plain', 'mv/from/ctl\u0001x']) await client.put(k, Buffer.from('x'));
    const fs = new Filesystem({
      client,
      prefix: 'mv/',
      readOnly: false,
      defaults: { uid: 0, gid: 0, fileMode: 0o644, dirMode: 0o755 },
      cacheTtlMs: 1000,
      memoryLimit: 64 * 2 ** 20,
      cacheDir: await tempDir('estuary-atk-mctl-'),
      stagingLimit: 2 ** 30,
      firstPartSize: 8 * 2 ** 20,
      maxInFlight: 2,
      maxReadahead: 8 * 2 ** 20,
      renameDirLimit: 1000,
      memoryWaitMs: 2000,
      log: { error() {}, warn() {}, debug() {} },
    });
    await fs.start();
    onTeardown(() => fs.stop());
    await fs.getattr('/from');
    const renamed = await fs.rename('/from', '/to').then(() => 'ok', (e: unknown) => String(e));
    const left = (await client.list('mv/')).objects.map((o) => o.key).sort();
    expect({ renamed, left }).toEqual({ renamed: 'ok', left: ['mv/to/', 'mv/to/ctl\u0001x', 'mv/to/plain'] });
  });

  // Holds today: a listing paged two keys at a time, with MinIO's continuation tokens (base64:
  // `+`, `/`, `=`) signed in the query, with and without a delimiter.
  it('paged listings of hostile keys follow the continuation tokens', async () => {
    const keys = ['pg/a+b', 'pg/a b', 'pg/ctl\u0001', 'pg/ü/x', 'pg/%41', 'pg/z~'];
    for (const k of keys) await client.put(k, Buffer.from('x'));
    for (const delimiter of [undefined, '/']) {
      const seen: string[] = [];
      let token: string | undefined;
      let pagesRead = 0;
      do {
        const page = await client.list('pg/', { maxKeys: 2, delimiter, continuationToken: token });
        seen.push(...page.objects.map((o) => o.key), ...page.prefixes);
        token = page.nextToken;
        pagesRead++;
      } while (token && pagesRead < 20);
      const want = delimiter ? [...keys.filter((k) => k !== 'pg/ü/x'), 'pg/ü/'] : keys;
      expect(seen.sort()).toEqual(want.sort());
    }
  });

  // Holds today: a directory whose name holds the hostile characters is listed, and its pending
  // uploads found, by a prefix signed in the query.
  it('listings and upload listings by hostile prefixes', async () => {
    for (const name of KEYS) {
      const dir = `px/${name}/`;
      await client.put(`${dir}f`, Buffer.from('x'));
      expect((await client.list(dir, { delimiter: '/' })).objects.map((o) => o.key)).toEqual([`${dir}f`]);
      const id = await client.createMultipart(`${dir}up`);
      expect((await client.listUploads(`${dir}up`)).map((u) => u.uploadId)).toEqual([id]);
      await client.abortMultipart(`${dir}up`, id);
    }
    // Names with a `/` inside are prefixes of their own first segment.
    const want = [...new Set(KEYS.map((name) => `px/${name.split('/')[0]}/`))].sort();
    expect([...(await client.list('px/', { delimiter: '/' })).prefixes].sort()).toEqual(want);
  });
});
