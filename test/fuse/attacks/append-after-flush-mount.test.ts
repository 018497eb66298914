// Attacks through a real FUSE mount on the append that goes on after a flush published a file
// without a local copy (docs/SEMANTICS.md, "ESTUARY_FS_COPY_DROPPED" and "UploadPartCopy"): the
// mount's --cache-dir is a 256 KiB tmpfs, so no local copy of a part fits. A writer's duplicate
// descriptor closing (as a child process exiting does) publishes the file; the writer goes on.

import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { S3ObjectClient } from '../../../fuse/s3/s3-client.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import type { S3Server } from '../../helpers/s3rver.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { startChild } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { MiB, tinyDisk } from './append-after-flush-fs.ts';

afterAll(runTeardowns);

const BUCKET = 'append';
const fuse = fuseAvailable();
const minio = await minioAvailable();

function clientOf(server: S3Server): S3ObjectClient {
  return new S3ObjectClient({
    bucket: BUCKET,
    endpoint: server.endpoint,
    region: server.region,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
    maxAttempts: 2,
    idleTimeoutMs: 20_000,
    maxSockets: 8,
    env: {},
  });
}

const WRITER = String.raw`
import os, sys, time
path, src, first, more, flags = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
data = open(src, 'rb').read()
mode = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | (os.O_APPEND if 'append' in flags else 0)
fd = os.open(path, mode, 0o644)
def put(a, b):
    at = a
    while at < b:
        n = os.write(fd, data[at:min(b, at + 1048576)])
        at += n
put(0, first)
os.close(os.dup(fd))          # a child's copy of the descriptor closing: the file is published
print('published', flush=True)
if 'unlink' in flags:
    os.unlink(path)
if 'two' in flags:
    # A second writer (another process's >>) opens the published file and appends; the first
    # descriptor stays open and writes nothing more.
    fd2 = os.open(path, os.O_WRONLY | os.O_APPEND)
    print('opened second', flush=True)
    at = first
    while at < first + more:
        at += os.write(fd2, data[at:min(first + more, at + 1048576)])
    os.close(fd2)
else:
    put(first, first + more)
print('appended', flush=True)
if 'hold' in flags:
    time.sleep(60)
os.close(fd)
print('closed', flush=True)
`;

function attacks(name: string, start: () => Promise<S3Server>) {
  describe(`mount: append after a flush without a local copy: ${name}`, () => {
    let server: S3Server;
    let client: S3ObjectClient;
    let src: string;
    let script: string;
    let data: Buffer;

    it('starts', async () => {
      server = await start();
      client = clientOf(server);
      const dir = await tempDir('estuary-append-src-');
      src = join(dir, 'src');
      script = join(dir, 'writer.py');
      data = randomBytes(60 * MiB);
      writeFileSync(src, data);
      writeFileSync(script, WRITER);
    }, 120_000);

    for (const flags of ['plain', 'append']) {
      it(`20 MiB, a descriptor closed, 1 MiB + 3 more, close (${flags}): every byte`, async () => {
        const disk = await tinyDisk(256 * 1024);
        const m = await mountBucket(server, BUCKET, ['--cache-dir', disk, '--part-size', '5MiB']);
        const r = await sh(`python3 '${script}' '${m.dir}/f-${flags}' '${src}' ${20 * MiB} ${MiB + 3} ${flags}`);
        expect(r.out).toContain('closed');
        expect(r.code).toBe(0);
        const got = await client.get(`f-${flags}`);
        expect(got.length).toBe(21 * MiB + 3);
        expect(got.equals(data.subarray(0, 21 * MiB + 3))).toBe(true);
        expect(m.child.output()).toContain('ESTUARY_FS_COPY_DROPPED');
        await sh(`fusermount -u '${m.dir}'`);
      }, 60_000);
    }

    // Two descriptors: the first publishes 20 MiB (a duplicate closed) and stays open; a second
    // open with O_APPEND (another process's `>>`) adds 1 MiB and closes. The first closes last
    // with nothing new: the bucket holds all 21 MiB.
    it('publish 20 MiB, a second descriptor opened with O_APPEND adds 1 MiB: every byte', async () => {
      const disk = await tinyDisk(256 * 1024);
      const m = await mountBucket(server, BUCKET, ['--cache-dir', disk, '--part-size', '5MiB']);
      const r = await sh(`python3 '${script}' '${m.dir}/two' '${src}' ${20 * MiB} ${MiB} two`);
      expect(r.out).toContain('closed');
      expect(r.code).toBe(0);
      const got = await client.get('two');
      expect(got.length).toBe(21 * MiB);
      expect(got.equals(data.subarray(0, 21 * MiB))).toBe(true);
      await sh(`fusermount -u '${m.dir}'`);
    }, 60_000);

    // POSIX: a file unlinked while open stays writable through its descriptor (docs/SEMANTICS.md,
    // "unlink": it is only not recreated at close). A writer that publishes, unlinks its file
    // (a temporary file, as mkstemp users do) and goes on writing must not get an error.
    for (const first of [MiB, 20 * MiB]) {
      it(`publish ${first / MiB} MiB, unlink, write on, close: no error, nothing in the bucket`, async () => {
        const disk = await tinyDisk(first > MiB ? 256 * 1024 : 64 * MiB);
        const m = await mountBucket(server, BUCKET, ['--cache-dir', disk, '--part-size', '5MiB']);
        const key = `u-${first}`;
        const r = await sh(`python3 '${script}' '${m.dir}/${key}' '${src}' ${first} ${12 * MiB} unlink`);
        if (!r.out.includes('closed')) console.log(m.child.output().split('\n').filter((l) => /warn|error|"level":[45]/.test(l)).join('\n').slice(0, 3000));
        expect(r.out).toContain('closed');
        expect(r.code).toBe(0);
        expect(await client.head(key)).toBeUndefined();
        await sh(`fusermount -u '${m.dir}'`);
      }, 60_000);
    }

    // kill -9 of the mount while the append streams: the bucket holds the published object
    // (never a partial one), and the next start cleans the upload the append left.
    it('kill -9 mid-append: the published object stands whole', async () => {
      const disk = await tinyDisk(256 * 1024);
      const m = await mountBucket(server, BUCKET, ['--cache-dir', disk, '--part-size', '5MiB']);
      const w = startChild('python3', [script, `${m.dir}/k`, src, String(20 * MiB), String(30 * MiB), 'hold']);
      await w.waitFor(/appended/, 40_000);
      await m.child.stop('SIGKILL');
      await sh(`umount -l '${m.dir}'`);
      await w.stop('SIGKILL');
      const got = await client.get('k');
      expect(got.length).toBe(20 * MiB);
      expect(got.equals(data.subarray(0, 20 * MiB))).toBe(true);
      if (server.kind !== 'minio') return; // s3rver lists no multipart uploads
      expect((await client.listUploads('')).some((u) => u.key === 'k')).toBe(true);
      await new Promise((r) => setTimeout(r, 1500));
      const again = await mountBucket(server, BUCKET, ['--cache-dir', disk, '--abort-uploads-after', '1s']);
      let left = await client.listUploads('');
      for (let i = 0; i < 50 && left.some((u) => u.key === 'k'); i++) {
        await new Promise((r) => setTimeout(r, 100));
        left = await client.listUploads('');
      }
      expect(left.filter((u) => u.key === 'k')).toEqual([]);
      await sh(`fusermount -u '${again.dir}'`);
    }, 60_000);
  });
}

describe.runIf(fuse.ok)('FUSE', () => {
  attacks('s3rver', () => startS3rver({ buckets: [BUCKET] }));
  describe.runIf(minio.ok)('MinIO', () => attacks('minio', () => startMinio({ buckets: [BUCKET] })));
});
