// A failed `mv s t` over an open file (docs/SEMANTICS.md, "unlink"): the object `t` is as it was
// afterwards, content type and user metadata included, and a kill -9 of the mount right after the
// failed mv, with a writer or a reader holding t, leaves t in the bucket.
// Each case runs on a default mount and on one with --write-back (killed, that one is mounted again with the same cache directory, and the journal resumes).

import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { driver, ORIGINAL, setup, sha } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

const MOUNT_MODES: readonly [string, readonly string[]][] = [['default', []], ['--write-back', ['--write-back']]];

describe.skipIf(!fuse.ok || !minio.ok).each(MOUNT_MODES)('the bucket after a failed mv over an open file (%s)', (mode, flags) => {
  it('a reader: the put-back object keeps its Content-Type and user metadata', async () => {
    const S = await setup(`pb2-meta-${mode === 'default' ? 'd' : 'wb'}`, flags);
    await S.bucket.s3.send(new PutObjectCommand({ Bucket: S.bucket.name, Key: 'page.html', Body: ORIGINAL, ContentType: 'text/html', Metadata: { owner: 'web-team' } }));
    const cmd = driver();
    const t = join(S.dir, 'page.html');
    const s = join(S.dir, 'src');
    expect(await cmd(`put ${s} source`)).toBe('OK');
    expect(await cmd(`open r ${t} 0`)).toBe('OK');
    expect(await cmd('sha r')).toBe(`OK ${sha(ORIGINAL)}`);
    S.refuse(true);
    const mv = await cmd(`rename ${s} ${t}`);
    S.refuse(false);
    expect(mv).toMatch(/^ERR/);
    expect(await cmd('close r')).toBe('OK');
    const head = await S.bucket.s3.send(new HeadObjectCommand({ Bucket: S.bucket.name, Key: 'page.html' }));
    expect({ body: (await S.bucket.body('page.html'))?.toString(), type: head.ContentType, owner: head.Metadata?.owner }).toEqual({ body: ORIGINAL, type: 'text/html', owner: 'web-team' });
  }, 40_000);

  for (const dirty of [false, true]) {
    it(`a writer${dirty ? ' with a change' : ' that wrote nothing yet'}: kill -9 of the mount right after the failed mv leaves t in the bucket`, async () => {
      const S = await setup(`pb2-kill${dirty ? 'd' : 'c'}-${mode === 'default' ? 'd' : 'wb'}`, flags);
      const cmd = driver();
      const t = join(S.dir, 't');
      const s = join(S.dir, 's');
      expect(await cmd(`put ${t} ${ORIGINAL}`)).toBe('OK');
      expect(await cmd(`put ${s} source`)).toBe('OK');
      expect(await cmd(`open w ${t} ${0o2}`)).toBe('OK');
      if (dirty) expect(await cmd('write w 79 1 0')).toBe('OK');
      S.refuse(true);
      const mv = await cmd(`rename ${s} ${t}`);
      S.refuse(false);
      expect(mv).toMatch(/^ERR/);
      // What another client sees before the writer closes.
      const seen = (await S.bucket.body('t'))?.toString();
      S.mounted.child.stop('SIGKILL');
      await wait(1000);
      if (mode !== 'default') {
        // Mounted again with the same cache directory: the write-back journal resumes.
        await S.remount();
        await wait(3000);
      }
      expect({ seen, after: (await S.bucket.body('t'))?.toString(), s: (await S.bucket.body('s'))?.toString() }).toEqual({ seen: ORIGINAL, after: ORIGINAL, s: 'source' });
    }, 40_000);
  }

  it('control, a reader: kill -9 of the mount right after the failed mv leaves t in the bucket', async () => {
    const S = await setup(`pb2-killr-${mode === 'default' ? 'd' : 'wb'}`, flags);
    const cmd = driver();
    const t = join(S.dir, 't');
    const s = join(S.dir, 's');
    expect(await cmd(`put ${t} ${ORIGINAL}`)).toBe('OK');
    expect(await cmd(`put ${s} source`)).toBe('OK');
    expect(await cmd(`open r ${t} 0`)).toBe('OK');
    S.refuse(true);
    const mv = await cmd(`rename ${s} ${t}`);
    S.refuse(false);
    expect(mv).toMatch(/^ERR/);
    S.mounted.child.stop('SIGKILL');
    await wait(1000);
    expect({ after: (await S.bucket.body('t'))?.toString(), s: (await S.bucket.body('s'))?.toString() }).toEqual({ after: ORIGINAL, s: 'source' });
  }, 40_000);
});
