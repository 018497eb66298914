// A rename of a directory over an open file fails with ENOTDIR (rename(2)), and the file stays
// (docs/SEMANTICS.md, "unlink"), although libfuse hides the open file before it passes the
// rename on.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { driver, ORIGINAL, setup, type Setup, sha } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();

describe.skipIf(!fuse.ok || !minio.ok)('rename(2) of a directory over an open file', () => {
  let S: Setup;
  beforeAll(async () => {
    S = await setup('pb2-dirover');
  }, 30_000);

  for (const mode of ['reader', 'writer'] as const) {
    it(`held by a ${mode}: ENOTDIR, and the file stays`, async () => {
      const cmd = driver();
      const t = join(S.dir, `${mode}-t`);
      const d = join(S.dir, `${mode}-d`);
      expect(await cmd(`put ${t} ${ORIGINAL}`)).toBe('OK');
      expect(await cmd(`mkdir ${d}`)).toBe('OK');
      expect(await cmd(`put ${join(d, 'x')} inside`)).toBe('OK');
      expect(await cmd(mode === 'reader' ? `open h ${t} 0` : `open h ${t} ${0o2}`)).toBe('OK');
      const out = [await cmd(`rename ${d} ${t}`), await cmd(`psha ${t}`), await cmd(`stat ${join(d, 'x')}`), await cmd('close h')];
      await new Promise((r) => setTimeout(r, 500));
      expect({ out, t: (await S.bucket.body(`${mode}-t`))?.toString(), x: (await S.bucket.body(`${mode}-d/x`))?.toString() }).toEqual({
        out: ['ERR Not a directory', `OK ${sha(ORIGINAL)}`, 'OK 6 644', 'OK'],
        t: ORIGINAL,
        x: 'inside',
      });
    }, 40_000);
  }
});
