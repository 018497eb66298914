// A failed `mv s t` where t is the only object of a directory that has no marker (a prefix only)
// and a writer holds it: the directory and the file stay visible at once (docs/SEMANTICS.md,
// "unlink").

import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { driver, ORIGINAL, setup, type Setup } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();

describe.skipIf(!fuse.ok || !minio.ok)('a put-back file alone in a directory without a marker', () => {
  let S: Setup;
  beforeAll(async () => {
    S = await setup('pb2-implicit');
  }, 30_000);

  for (const mode of ['writer', 'reader'] as const) {
    it(`held by a ${mode}: the directory and the file are there after the failed mv`, async () => {
      await S.bucket.put(`${mode}/t`, Buffer.from(ORIGINAL));
      const cmd = driver();
      const dd = join(S.dir, mode);
      const t = join(dd, 't');
      const s = join(S.dir, `${mode}-s`);
      expect(await cmd(`put ${s} source`)).toBe('OK');
      expect(await cmd(mode === 'writer' ? `open h ${t} ${0o2}` : `open h ${t} 0`)).toBe('OK');
      S.refuse(true);
      const mv = await cmd(`rename ${s} ${t}`);
      S.refuse(false);
      expect(mv).toMatch(/^ERR/);
      const out = [await cmd(`stat ${dd}`), await cmd('sleep 1.2'), await cmd(`stat ${t}`)];
      let ls: unknown;
      try { ls = await readdir(dd); } catch (e) { ls = String(e); }
      const close = await cmd('close h');
      expect({ out, ls, close, t: (await S.bucket.body(`${mode}/t`))?.toString() }).toEqual({
        out: ['OK 0 755', 'OK', `OK ${ORIGINAL.length} 644`],
        ls: ['t'],
        close: 'OK',
        t: ORIGINAL,
      });
    }, 40_000);
  }
});
