// Attack on docs/SEMANTICS.md "unlink", traced callers: "A file rename is a copy, then a delete of
// the source: when the store makes the copy but refuses that delete, the rename answers EIO and
// both names hold the source's content, as for a target nobody has open; the target's writers go
// on and their close publishes it." Checked over a target open for reading and for writing, and
// that the reader's close (libfuse's unlink of the hidden name) removes nothing.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { sha256 } from './hidden-harness.ts';
import { ACCESS_DENIED } from './rmopen-harness.ts';
import { driver, ORIGINAL, setup, sha, type Setup } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();

describe.skipIf(!fuse.ok || !minio.ok)('mv over an open file, the source\'s DELETE refused (callers traced)', () => {
  let S: Setup;
  let refuseDelete = false;
  beforeAll(async () => {
    S = await setup('callers-delref', [], (method, path) => (refuseDelete && method === 'DELETE' && path.endsWith('-s') ? { status: 403, body: ACCESS_DENIED } : 'pass'));
  }, 30_000);

  it('reader: EIO, both names hold the source, the reader keeps its bytes, its close removes nothing', async () => {
    const cmd = driver();
    const t = join(S.dir, 'r-t');
    const s = join(S.dir, 'r-s');
    expect(await cmd(`put ${t} ${ORIGINAL}`)).toBe('OK');
    expect(await cmd(`put ${s} source`)).toBe('OK');
    expect(await cmd(`open r ${t} 0`)).toBe('OK');
    refuseDelete = true;
    const mv = await cmd(`rename ${s} ${t}`);
    refuseDelete = false;
    const out = [mv, await cmd('sha r'), await cmd(`cat ${t}`), await cmd(`cat ${s}`), await cmd('close r')];
    await new Promise((r) => setTimeout(r, 1500));
    expect({ out, t: (await S.bucket.body('r-t'))?.toString(), s: (await S.bucket.body('r-s'))?.toString(), again: await cmd(`cat ${t}`) }).toEqual({
      out: ['ERR Input/output error', `OK ${sha(ORIGINAL)}`, 'OK source', 'OK source', 'OK'],
      t: 'source',
      s: 'source',
      again: 'OK source',
    });
  }, 40_000);

  it('no descriptor open (the doc\'s "as for a target nobody has open"): EIO, both names hold the source', async () => {
    const cmd = driver();
    const t = join(S.dir, 'n-t');
    const s = join(S.dir, 'n-s');
    expect(await cmd(`put ${t} ${ORIGINAL}`)).toBe('OK');
    expect(await cmd(`put ${s} source`)).toBe('OK');
    refuseDelete = true;
    const mv = await cmd(`rename ${s} ${t}`);
    refuseDelete = false;
    expect({ mv, t: (await S.bucket.body('n-t'))?.toString(), s: (await S.bucket.body('n-s'))?.toString() }).toEqual({
      mv: 'ERR Input/output error',
      t: 'source',
      s: 'source',
    });
  }, 40_000);

  it('writer: EIO, the writer goes on and its close publishes under the target name', async () => {
    const cmd = driver();
    const t = join(S.dir, 'w-t');
    const s = join(S.dir, 'w-s');
    expect(await cmd(`put ${t} ${ORIGINAL}`)).toBe('OK');
    expect(await cmd(`put ${s} source`)).toBe('OK');
    expect(await cmd(`open w ${t} ${0o2 | 0o1000}`)).toBe('OK');
    expect(await cmd('write w 65 100 0')).toBe('OK');
    refuseDelete = true;
    const mv = await cmd(`rename ${s} ${t}`);
    refuseDelete = false;
    const out = [mv, await cmd('write w 66 10 100'), await cmd('close w')];
    await new Promise((r) => setTimeout(r, 1500));
    expect({ out, t: await S.bucket.sha('w-t'), s: (await S.bucket.body('w-s'))?.toString() }).toEqual({
      out: ['ERR Input/output error', 'OK', 'OK'],
      t: sha256(Buffer.concat([Buffer.alloc(100, 65), Buffer.alloc(10, 66)])),
      s: 'source',
    });
  }, 40_000);
});
