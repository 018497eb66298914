// Attack on docs/SEMANTICS.md "unlink" (a file put back after a failed `mv s t` over it, its
// reader still open): `rm t` ends the name `t` but not the mount's map from libfuse's hidden name
// to `t` (fs-core `undone`), which lives until the reader's last close. Operations libfuse sends
// for the reader's inode by that hidden name — fstat, fchmod, an open of /proc/self/fd/N — then
// act on whatever file is called `t` now: a new, unrelated file is shown, changed, and truncated.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { failedMvOverReader, ORIGINAL, setup, type Setup, sha, CALLER_MODES } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();
const O_WRONLY_TRUNC = 0o1 | 0o1000;
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!fuse.ok || !minio.ok).each(CALLER_MODES)('a file put back after a failed mv over it, then removed and its name reused (%s)', (mode, env) => {
  let S: Setup;
  beforeAll(async () => {
    S = await setup(`undone-reused-${mode.replace(/ /g, '-')}`, [], undefined, env);
  }, 30_000);

  it('fstat and fchmod through the old reader do not show or change the new file', async () => {
    const { cmd, t } = await failedMvOverReader(S, S.dir, 'c', expect);
    const out = [await cmd(`unlink ${t}`), await cmd(`put ${t} new`), await cmd('fchmod r 600')];
    await wait(1500);
    const after = [await cmd('fstat r'), await cmd(`stat ${t}`)];
    expect({ out, after }).toEqual({ out: ['OK', 'OK', 'OK'], after: [`OK ${ORIGINAL.length} 600`, 'OK 3 644'] });
  }, 40_000);

  it('a rename over it that succeeds, right after: past the kernel attribute cache, the reader keeps the old file, the name has the new one', async () => {
    const { cmd, t, s } = await failedMvOverReader(S, S.dir, 'e', expect);
    const out = [await cmd(`rename ${s} ${t}`), await cmd('sleep 1.2'), await cmd('fstat r'), await cmd('sha r'), await cmd(`cat ${t}`), await cmd('close r')];
    await wait(500);
    expect({ out, t: (await S.bucket.body('e'))?.toString(), src: await S.bucket.body('e-src') }).toEqual({
      out: ['OK', 'OK', `OK ${ORIGINAL.length} 644`, `OK ${sha(ORIGINAL)}`, 'OK source', 'OK'],
      t: 'source',
      src: undefined,
    });
  }, 40_000);

  // The old reader's file is a removed file still open: opening it for writing is refused with
  // EBUSY (SEMANTICS.md, the table of errnos), and must not reach the new file named t.
  it('an open of the old reader through /proc/self/fd for writing does not truncate the new file', async () => {
    const { cmd, t } = await failedMvOverReader(S, S.dir, 'd', expect);
    const out = [await cmd(`unlink ${t}`), await cmd(`put ${t} precious`), await cmd(`reopen r w ${O_WRONLY_TRUNC}`), await cmd('close r')];
    await wait(500);
    expect({ out, t: (await S.bucket.body('d'))?.toString(), mount: await cmd(`cat ${t}`) }).toEqual({
      out: ['OK', 'OK', 'ERR Device or resource busy', 'OK'],
      t: 'precious',
      mount: 'OK precious',
    });
  }, 40_000);
});
