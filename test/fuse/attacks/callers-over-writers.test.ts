// Attack on docs/SEMANTICS.md "unlink": a successful rename over a file that is open (traced
// callers: nothing removed at the hide; "the rename then replaces the file as it replaces a file
// nobody has open (its readers keep what they opened, its writers publish nothing)"), where the
// source too is open for writing with unsaved changes. Expected: the target's reader keeps its
// bytes, the target's writer publishes nothing (also at its close), the source's writer publishes
// its bytes under the target's name at its close, and no key is left under the source's name.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { sha256 } from './hidden-harness.ts';
import { CALLER_MODES, driver, ORIGINAL, setup, sha, type Setup } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();
const RW_CREAT_TRUNC = 0o2 | 0o100 | 0o1000;

for (const extra of [[], ['--write-back']] as const) {
  describe.skipIf(!fuse.ok || !minio.ok).each(CALLER_MODES)(`mv of a file being written over a file being read and written ${extra.join(' ')} (%s)`, (mode, env) => {
    let S: Setup;
    beforeAll(async () => {
      S = await setup(`callers-ow-${extra.length}-${mode.replace(/ /g, '-')}`, extra, undefined, env);
    }, 30_000);

    it('the bucket ends with the source writer\'s bytes under the target name, and nothing else', async () => {
      const cmd = driver();
      const t = join(S.dir, 't');
      const s = join(S.dir, 's');
      expect(await cmd(`put ${t} ${ORIGINAL}`)).toBe('OK');
      expect(await cmd(`open r ${t} 0`)).toBe('OK');
      expect(await cmd('sha r')).toBe(`OK ${sha(ORIGINAL)}`);
      expect(await cmd(`open tw ${t} 2`)).toBe('OK');
      expect(await cmd('write tw 84 3000 0')).toBe('OK');
      expect(await cmd(`open sw ${s} ${RW_CREAT_TRUNC}`)).toBe('OK');
      expect(await cmd('write sw 83 2000 0')).toBe('OK');
      const out = [await cmd(`rename ${s} ${t}`), await cmd('sha r'), await cmd('write tw 85 10 3000'), await cmd('close tw'), await cmd('write sw 86 10 2000'), await cmd('close sw'), await cmd('close r')];
      await new Promise((r) => setTimeout(r, extra.length ? 4000 : 1000));
      const want = sha256(Buffer.concat([Buffer.alloc(2000, 83), Buffer.alloc(10, 86)]));
      expect({ out, keys: await S.bucket.keys(), t: await S.bucket.sha('t'), read: await cmd(`psha ${t}`) }).toEqual({
        // (What the reader sees of the target writer's unsaved bytes is not in question here.)
        out: ['OK', expect.stringMatching(/^OK [0-9a-f]{64}$/), 'OK', 'OK', 'OK', 'OK', 'OK'],
        keys: ['t'],
        t: want,
        read: `OK ${want}`,
      });
    }, 40_000);
  });
}
