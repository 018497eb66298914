// Attack on docs/SEMANTICS.md "unlink": after a failed `mv s t` over a file open for reading, "the
// name can be opened, stat'ed and changed at once, also through the entry the kernel cached for
// it". When the reader closes within that second, libfuse unlinks the hidden name and the mount
// drops its map from that name to `t` (Namespace.unlink: `undone.delete`); the kernel's entry of
// `t` still points at libfuse's node named by the hidden name until it expires, so `t` answers
// ENOENT to an open or chmod for the rest of the second, though the file is there.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { failedMvOverReader, ORIGINAL, setup, sha, type Setup, CALLER_MODES } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();

describe.skipIf(!fuse.ok || !minio.ok).each(CALLER_MODES)('a file put back after a failed mv over it, its reader closed at once (%s)', (mode, env) => {
  let S: Setup;
  beforeAll(async () => {
    S = await setup(`undone-lastclose-${mode.replace(/ /g, '-')}`, [], undefined, env);
  }, 30_000);

  it('the name opens and takes a chmod right after the reader\'s close', async () => {
    const { cmd, t } = await failedMvOverReader(S, S.dir, 'a', expect);
    // The kernel sends RELEASE after close() returns: 0.2 s lets libfuse's unlink of the hidden name land.
    const out = [await cmd('close r'), await cmd('sleep 0.2'), await cmd(`psha ${t}`), await cmd(`chmod ${t} 600`)];
    expect(out).toEqual(['OK', 'OK', `OK ${sha(ORIGINAL)}`, 'OK']);
  }, 40_000);
});
