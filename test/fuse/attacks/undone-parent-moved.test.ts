// Attack on docs/SEMANTICS.md "unlink": after a failed `mv s d/t` over a file open for reading,
// the mount maps libfuse's hidden name `d/.fuse_hidden…` to `d/t` (fs-core `undone`). A rename of
// the directory `d` to `e` moves the removed-file names it holds (renameDir, `hidden`), but not
// this map: the kernel's entry of `e/t` still leads to libfuse's node, now `e/.fuse_hidden…`,
// which the mount no longer knows, and `e/t` cannot be opened for the rest of that second.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { driver, failedMvOverReader, ORIGINAL, setup, sha, type Setup, CALLER_MODES } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();

describe.skipIf(!fuse.ok || !minio.ok).each(CALLER_MODES)('a file put back after a failed mv over it, then its directory renamed (%s)', (mode, env) => {
  let S: Setup;
  beforeAll(async () => {
    S = await setup(`undone-parent-${mode.replace(/ /g, '-')}`, [], undefined, env);
  }, 30_000);

  it('the file opens at once under the directory\'s new name', async () => {
    const d = join(S.dir, 'dd');
    expect(await driver()(`mkdir ${d}`)).toBe('OK');
    const { cmd } = await failedMvOverReader(S, d, 'f', expect);
    const e = join(S.dir, 'ee');
    const out = [await cmd(`rename ${d} ${e}`), await cmd(`psha ${join(e, 'f')}`), await cmd(`chmod ${join(e, 'f')} 600`), await cmd('close r')];
    expect(out).toEqual(['OK', `OK ${sha(ORIGINAL)}`, 'OK', 'OK']);
  }, 40_000);
});
