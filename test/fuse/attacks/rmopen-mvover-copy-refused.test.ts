// Attack on "a rename over a file that is being written is what the bucket answered: if the bucket
// refuses, the removal fails and changes nothing, the writer goes on and its close publishes the
// file" (the brief's promise; docs/SEMANTICS.md "unlink" says the same of the removal, but adds
// that a rename whose copy fails after libfuse's hide leaves the file it was to replace removed).
// `mv s t` while t is open with unsaved changes: libfuse first hides t (the mount deletes t's
// object and marks its writer removed), then sends the rename, whose CopyObject a proxy in front of
// MinIO refuses (403). The mv answers an error; the test asks that nothing was lost: t's writer
// publishes t at close, or its close says it did not.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { type MinioServer, minioAvailable, startMinio } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { Bucket, sha256 } from './hidden-harness.ts';
import { startProxy, driver, O_RDWR_CREAT_TRUNC } from './rmopen-harness.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();
const minio = await minioAvailable();


describe.skipIf(!fuse.ok || !minio.ok)('mv over a file open for writing, the copy refused', () => {
  let server: MinioServer;
  let bucket: Bucket;
  let dir: string;
  let refuseCopy = false;
  beforeAll(async () => {
    server = await startMinio();
    bucket = new Bucket(server, `rmopen-mv-${process.pid}`);
    await bucket.create();
    const denied = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied.</Message></Error>`;
    const url = await startProxy(server.endpoint, (method, _path, headers) =>
      refuseCopy && method === 'PUT' && headers['x-amz-copy-source'] !== undefined ? { status: 403, body: denied } : 'pass',
    );
    const cache = await tempDir('rmopen-cache-');
    dir = (await mountBucket({ ...server, endpoint: url }, bucket.name, ['--cache-dir', cache, '--cache-ttl', '0s', '--request-timeout', '2s', '--retries', '1'])).dir;
  }, 30_000);

  it('a failed mv-over loses nothing: the target\'s writer publishes it, or its close fails', async () => {
    const cmd = driver();
    const t = join(dir, 't');
    const s = join(dir, 's');
    expect(await cmd(`open w ${t} ${O_RDWR_CREAT_TRUNC}`)).toBe('OK');
    expect(await cmd('write w 65 100000 0')).toBe('OK');
    expect(await cmd('fsync w')).toBe('OK');
    expect(await cmd('write w 66 30000 100000')).toBe('OK');
    expect((await sh(`printf source > '${s}'`, undefined, 20_000)).code).toBe(0);
    refuseCopy = true;
    const mv = await sh(`mv '${s}' '${t}'`, undefined, 20_000);
    refuseCopy = false;
    const written = await cmd('write w 67 1000 130000');
    const close = await cmd('close w');
    const listed = (await sh(`ls '${dir}'`, undefined, 20_000)).out.split('\n').filter(Boolean).sort();
    const whole = Buffer.concat([Buffer.alloc(100000, 65), Buffer.alloc(30000, 66), Buffer.alloc(1000, 67)]);
    const state = { mv: mv.code === 0 ? 'ok' : mv.out.trim(), written, close, listed, keys: await bucket.keys(), t: await bucket.sha('t') };
    if (mv.code === 0) {
      // The rename happened: t is the source's content, and the writer's bytes went nowhere.
      expect({ keys: state.keys, t: state.t }).toEqual({ keys: ['t'], t: sha256(Buffer.from('source')) });
      return;
    }
    // The mv failed. The writer's close said OK, so its bytes must be in the bucket as t;
    // had they been lost, its close (the only place a writer learns) must have failed.
    if (close === 'OK') {
      expect({ keys: state.keys, t: state.t, listed }).toEqual({ keys: ['s', 't'], t: sha256(whole), listed: ['s', 't'] });
    } else {
      expect(close).toMatch(/^ERR/);
    }
  }, 40_000);

  /** `r` written, held open by a reader, and a `mv` over it whose copy is refused. */
  async function failedMvOverReader(name: string) {
    const cmd = driver();
    const t = join(dir, name);
    const s = join(dir, `${name}-src`);
    const content = Buffer.alloc(300_000, 72);
    expect((await sh(`head -c 300000 /dev/zero | tr '\\0' 'H' > '${t}' && printf source > '${s}'`, undefined, 20_000)).code).toBe(0);
    expect(await cmd(`open r ${t} 0`)).toBe(`OK`);
    expect(await cmd('sha r')).toBe(`OK ${sha256(content)}`);
    refuseCopy = true;
    const mv = await sh(`mv '${s}' '${t}'`, undefined, 20_000);
    refuseCopy = false;
    expect(mv.code, mv.out).not.toBe(0);
    return { cmd, t, content };
  }

  it('a failed mv over a file open only for reading puts that file back from the reader\'s copy', async () => {
    const { cmd, t, content } = await failedMvOverReader('r');
    // At once, through the kernel's entry of the name (libfuse still calls the file by the name
    // it hid it under): readable, and a chmod lands on the file.
    const reread = await sh(`sha256sum < '${t}' && chmod 600 '${t}'`, undefined, 20_000);
    expect(reread.code, reread.out).toBe(0);
    expect(reread.out.split(' ')[0]).toBe(sha256(content));
    expect(await cmd('sha r')).toBe(`OK ${sha256(content)}`);
    expect(await bucket.sha('r')).toBe(sha256(content));
    // The reader's close ends libfuse's hidden name, not the file.
    expect(await cmd('close r')).toBe('OK');
    await new Promise((r) => setTimeout(r, 1500));
    expect(await bucket.sha('r')).toBe(sha256(content));
    expect((await sh(`stat -c %a '${t}' && sha256sum < '${t}'`, undefined, 20_000)).out.split(/\s+/).slice(0, 2)).toEqual(['600', sha256(content)]);
    expect(await bucket.sha('r-src')).toBe(sha256(Buffer.from('source')));
  }, 40_000);

  it('an rm right after such a failed mv removes the file, and the reader keeps reading it', async () => {
    const { cmd, t, content } = await failedMvOverReader('q');
    const rm = await sh(`rm '${t}'`, undefined, 20_000);
    expect(rm.code, rm.out).toBe(0);
    expect(await bucket.keys()).not.toContain('q');
    expect(await cmd('sha r')).toBe(`OK ${sha256(content)}`);
    expect(await cmd('close r')).toBe('OK');
    await new Promise((r) => setTimeout(r, 1500));
    expect(await bucket.keys()).not.toContain('q');
    expect((await sh(`ls '${dir}'`, undefined, 20_000)).out.split('\n')).not.toContain('q');
  }, 40_000);
});
