// A rename over an open file that fails at its last step: the copy of s to t is made, the DELETE
// of s is refused. A file rename is a copy then a delete (docs/SEMANTICS.md, "rename"), so the
// rename answers the error and both names hold s's content, as for a t nobody has open; a reader
// of t keeps reading what it opened, and a writer of t goes on writing it and publishes it at its
// close (the failed removal leaves the writers writing the file).

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { ACCESS_DENIED } from './rmopen-harness.ts';
import { driver, ORIGINAL, setup, type Setup, sha } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!fuse.ok || !minio.ok)('a mv over an open file whose DELETE of the source is refused', () => {
  let S: Setup;
  let refuseDelete = '';
  beforeAll(async () => {
    S = await setup('pb2-delrefused', [], (method, path) => (refuseDelete !== '' && method === 'DELETE' && path.endsWith(`/${refuseDelete}`) ? { status: 403, body: ACCESS_DENIED } : 'pass'));
  }, 30_000);

  for (const mode of ['reader', 'writer'] as const) {
    it(`held by a ${mode}: the mv fails, s stays, t holds what a failed copy-then-delete leaves`, async () => {
      const cmd = driver();
      const t = join(S.dir, `${mode}-t`);
      const s = join(S.dir, `${mode}-s`);
      expect(await cmd(`put ${t} ${ORIGINAL}`)).toBe('OK');
      expect(await cmd(`put ${s} source`)).toBe('OK');
      expect(await cmd(mode === 'reader' ? `open h ${t} 0` : `open h ${t} ${0o2}`)).toBe('OK');
      refuseDelete = `${mode}-s`;
      const mv = await cmd(`rename ${s} ${t}`);
      refuseDelete = '';
      const during = [await cmd(`psha ${t}`), await cmd(`cat ${s}`)];
      const inBucket = (await S.bucket.body(`${mode}-t`))?.toString();
      const close = await cmd('close h');
      await wait(2500);
      const kept = mode === 'reader' ? 'source' : ORIGINAL;
      expect({ mv: mv.startsWith('ERR'), during, inBucket, close, t: (await S.bucket.body(`${mode}-t`))?.toString(), s: (await S.bucket.body(`${mode}-s`))?.toString() }).toEqual({
        mv: true,
        during: [`OK ${sha(kept)}`, 'OK source'],
        inBucket: 'source',
        close: 'OK',
        t: kept,
        s: 'source',
      });
    }, 40_000);
  }
});
