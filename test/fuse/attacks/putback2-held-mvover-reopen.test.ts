// Attack on docs/SEMANTICS.md "unlink" (a put-back file "renamed over, while still open, ...
// becomes a removed file still open, its descriptors keep what they hold, and a new file given
// its name is another file"): after a failed mv, a `mv x t` that succeeds; then the old reader is
// opened again for writing through /proc/self/fd (EBUSY, the removed file's), and fchmod'ed.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { failedMvOverReader, ORIGINAL, setup, type Setup, sha } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!fuse.ok || !minio.ok)('a put-back file renamed over, then its old reader', () => {
  let S: Setup;
  beforeAll(async () => {
    S = await setup('pb2-mvover');
  }, 30_000);

  it('reopen for writing is refused, fchmod stays the removed file\'s, the new t is untouched', async () => {
    const { cmd, t } = await failedMvOverReader(S, S.dir, 'a', expect);
    const x = join(S.dir, 'a-x');
    expect(await cmd(`put ${x} from-x`)).toBe('OK');
    const out = [await cmd(`rename ${x} ${t}`), await cmd(`reopen r w ${0o1 | 0o1000}`), await cmd('fchmod r 600'), await cmd('fstat r'), await cmd('sha r'), await cmd('close r')];
    await wait(2500);
    expect({ out, t: await cmd(`stat ${t}`), body: (await S.bucket.body('a'))?.toString() }).toEqual({
      out: ['OK', 'ERR Device or resource busy', 'OK', `OK ${ORIGINAL.length} 600`, `OK ${sha(ORIGINAL)}`, 'OK'],
      t: 'OK 6 644',
      body: 'from-x',
    });
  }, 40_000);
});
