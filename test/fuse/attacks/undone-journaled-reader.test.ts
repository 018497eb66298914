// Attack on docs/SEMANTICS.md "unlink": "a file only read is put back at once from its reader's
// copy" after a failed `mv s t` over it. With --write-back, a file opened for reading while its
// journal entry is still pending gets a LocalReadHandle (the journal's data file), which
// keepReaders and undoHide only look for ReadHandles: hideOpen deletes the object, the rename
// fails, nothing is put back ("nothing held a copy to put back" in the log), and `t` is gone for
// good — from the bucket and the mount — though mv answered an error.

import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { driver, setup, sha, CALLER_MODES } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();

describe.skipIf(!fuse.ok || !minio.ok).each(CALLER_MODES)('--write-back: a failed mv over a file read while journaled (%s)', (mode, env) => {
  it('the file comes back under its name', async () => {
    const S = await setup(`undone-journal-${mode.replace(/ /g, '-')}`, ['--write-back'], undefined, env);
    const cmd = driver();
    const t = join(S.dir, 'f');
    const s = join(S.dir, 'f-src');
    const content = 'journaled-content';
    expect(await cmd(`put ${s} source`)).toBe('OK');
    expect(await cmd(`put ${t} ${content}`)).toBe('OK');
    // At once: the journal has not uploaded it yet, and the reader reads the journal's copy.
    expect(await cmd(`open r ${t} 0`)).toBe('OK');
    S.refuse(true);
    const mv = await cmd(`rename ${s} ${t}`);
    S.refuse(false);
    const read = await cmd('sha r');
    await cmd('close r');
    await new Promise((r) => setTimeout(r, 1500));
    expect({ mv, read, bucket: await S.bucket.sha('f'), mount: await cmd(`psha ${t}`) }).toEqual({
      mv: expect.stringMatching(/^ERR/),
      read: `OK ${sha(content)}`,
      bucket: sha(content),
      mount: `OK ${sha(content)}`,
    });
  }, 40_000);
});
