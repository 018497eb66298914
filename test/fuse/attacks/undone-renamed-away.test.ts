// Attack on docs/SEMANTICS.md "unlink": after a failed `mv s t` over a file open for reading, "the
// name can be opened, stat'ed and changed at once, also through the entry the kernel cached for
// it (... the mount takes that name [the hidden one] for the file meanwhile)". The mount maps the
// hidden name to `t` (fs-core `undone`/`named()`), but that map is not moved when the file is
// renamed away: `mv t u` moves the kernel's cached entry (still libfuse's hidden node) to `u`, so
// within that second every operation on `u` resolves to the path `t` — gone (ENOENT), or, once a
// new `t` exists, that other file, which a write meant for `u` then overwrites.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { sha256 } from './hidden-harness.ts';
import { driver, failedMvOverReader, ORIGINAL, setup, sha, type Setup, CALLER_MODES } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();

describe.skipIf(!fuse.ok || !minio.ok).each(CALLER_MODES)('a file put back after a failed mv over it, then renamed away (%s)', (mode, env) => {
  let S: Setup;
  beforeAll(async () => {
    S = await setup(`undone-away-${mode.replace(/ /g, '-')}`, [], undefined, env);
  }, 30_000);

  it('mv t u right after: u can be stat\'ed and read at once, and the reader can fstat', async () => {
    const { cmd, t } = await failedMvOverReader(S, S.dir, 'b', expect);
    const u = join(S.dir, 'b-moved');
    const out = [await cmd(`rename ${t} ${u}`), await cmd(`stat ${u}`), await cmd(`psha ${u}`), await cmd('fstat r')];
    expect(out).toEqual(['OK', `OK ${ORIGINAL.length} 644`, `OK ${sha(ORIGINAL)}`, `OK ${ORIGINAL.length} 644`]);
  }, 40_000);

  it('a writer\'s file: mv t u right after, then fstat of the writer and stat of u answer, and the close publishes u', async () => {
    const cmd = driver();
    const t = join(S.dir, 'w');
    const s = join(S.dir, 'w-src');
    expect(await cmd(`open w ${t} ${0o2 | 0o100 | 0o1000}`)).toBe('OK');
    expect(await cmd('write w 65 1000 0')).toBe('OK');
    expect(await cmd(`put ${s} source`)).toBe('OK');
    S.refuse(true);
    const mv = await cmd(`rename ${s} ${t}`);
    S.refuse(false);
    expect(mv).toMatch(/^ERR/);
    const u = join(S.dir, 'w-u');
    const out = [await cmd(`rename ${t} ${u}`), await cmd(`stat ${u}`), await cmd('write w 66 10 1000'), await cmd('fstat w'), await cmd('close w')];
    await new Promise((r) => setTimeout(r, 1500));
    expect({ out, u: await S.bucket.sha('w-u') }).toEqual({
      out: ['OK', 'OK 1000 644', 'OK', 'OK 1010 644', 'OK'],
      u: sha256(Buffer.concat([Buffer.alloc(1000, 65), Buffer.alloc(10, 66)])),
    });
  }, 40_000);

  it('mv t u, a new t, then a write to u: it lands in u, and the new t keeps its content', async () => {
    const { cmd, t } = await failedMvOverReader(S, S.dir, 'c', expect);
    const u = join(S.dir, 'c-moved');
    const out = [await cmd(`rename ${t} ${u}`), await cmd(`put ${t} precious`), await cmd(`put ${u} into-u`), await cmd('close r')];
    await new Promise((r) => setTimeout(r, 1500));
    expect({ out, t: (await S.bucket.body('c'))?.toString(), u: (await S.bucket.body('c-moved'))?.toString() }).toEqual({
      out: ['OK', 'OK', 'OK', 'OK'],
      t: 'precious',
      u: 'into-u',
    });
  }, 40_000);
});
