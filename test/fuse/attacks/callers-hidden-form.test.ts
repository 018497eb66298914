// Attack on docs/SEMANTICS.md "unlink": "a user's rename to a name of that form (`mv f
// .fuse_hidden0123456789abcdef`, also of an open file) is a rename like any other", and over a file
// of that name that is open (libfuse hides it: a rename over an open file, traced callers).
// Expected: the new name is listed, readable, holds the content, in the bucket under that key;
// the old name is gone.

import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { CALLER_MODES, driver, ORIGINAL, setup, sha, type Setup } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();
const H = '.fuse_hidden0123456789abcdef';

describe.skipIf(!fuse.ok || !minio.ok).each(CALLER_MODES)('rename to and over a name of libfuse\'s hidden form (%s)', (mode, env) => {
  let S: Setup;
  beforeAll(async () => {
    S = await setup(`callers-hform-${mode.replace(/ /g, '-')}`, [], undefined, env);
  }, 30_000);

  it('mv f H, then mv g over H while H is open for reading', async () => {
    const cmd = driver();
    const f = join(S.dir, 'f');
    const g = join(S.dir, 'g');
    const h = join(S.dir, H);
    expect(await cmd(`put ${f} ${ORIGINAL}`)).toBe('OK');
    expect(await cmd(`put ${g} gcontent`)).toBe('OK');
    const first = [await cmd(`rename ${f} ${h}`), await cmd(`cat ${h}`)];
    const listed1 = (await readdir(S.dir)).sort();
    expect(await cmd(`open r ${h} 0`)).toBe('OK');
    const second = [await cmd(`rename ${g} ${h}`), await cmd('sha r'), await cmd(`cat ${h}`), await cmd('close r')];
    await new Promise((r) => setTimeout(r, 1500));
    expect({ first, listed1, second, listed2: (await readdir(S.dir)).sort(), keys: await S.bucket.keys(), h: (await S.bucket.body(H))?.toString() }).toEqual({
      first: ['OK', `OK ${ORIGINAL}`],
      listed1: [H, 'g'],
      second: ['OK', `OK ${sha(ORIGINAL)}`, 'OK gcontent', 'OK'],
      listed2: [H],
      keys: [H],
      h: 'gcontent',
    });
  }, 40_000);
});
