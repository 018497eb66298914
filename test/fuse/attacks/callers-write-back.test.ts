// Attack on docs/SEMANTICS.md "unlink": a rename over an open file (traced callers: nothing is
// removed at the hide, the rename replaces the file "as it replaces a file nobody has open"), with
// --write-back, over a target whose last close is still in the journal, its upload under way.
// SEMANTICS "Write-back": "unlink, rename ... on them wait for their upload first". Expected: after
// the rename and the reader's close the bucket holds the source under the target's name, and no
// source key; the journal's older content must not land afterwards.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { CALLER_MODES, driver, setup, type Setup } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();

describe.skipIf(!fuse.ok || !minio.ok).each(CALLER_MODES)('--write-back: mv over an open file whose upload is under way (%s)', (mode, env) => {
  let S: Setup;
  beforeAll(async () => {
    S = await setup(`callers-wb-${mode.replace(/ /g, '-')}`, ['--write-back'], (method, path, headers) =>
      method === 'PUT' && headers['x-amz-copy-source'] === undefined && /\/t\d$/.test(path) ? { lateMs: 1200 } : 'pass',
    env);
  }, 30_000);

  for (const [n, open] of [[1, true], [2, false]] as const) {
    it(`${open ? 'target open for reading' : 'target not open'}: the bucket ends with the source under the target name`, async () => {
      const cmd = driver();
      const t = join(S.dir, `t${n}`);
      const s = join(S.dir, `s${n}`);
      expect(await cmd(`put ${t} journaled`)).toBe('OK');
      if (open) expect(await cmd(`open r ${t} 0`)).toBe('OK');
      expect(await cmd(`put ${s} source`)).toBe('OK');
      const mv = await cmd(`rename ${s} ${t}`);
      if (open) expect(await cmd('close r')).toBe('OK');
      await new Promise((r) => setTimeout(r, 5000));
      expect({ mv, t: (await S.bucket.body(`t${n}`))?.toString(), s: (await S.bucket.body(`s${n}`))?.toString(), read: await cmd(`cat ${t}`) }).toEqual({
        mv: 'OK',
        t: 'source',
        s: undefined,
        read: 'OK source',
      });
    }, 40_000);
  }
});
