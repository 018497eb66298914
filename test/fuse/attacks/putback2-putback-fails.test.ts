// Attack on docs/SEMANTICS.md "unlink" ("if the rename then fails (the store refuses the copy)
// ... a file only read is put back at once from its reader's copy"): the store refuses the copy
// and, in the same moment, the put-back's PUT too (a store briefly refusing writes: 503 Slow
// Down, or a policy on the key). What does the mount answer, what is left of t, and does the
// reader still have its file?

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

describe.skipIf(!fuse.ok || !minio.ok)('a failed mv whose put-back is refused too', () => {
  let S: Setup;
  let refusePut = false;
  beforeAll(async () => {
    S = await setup('pb2-pbfails', [], (method, path) => (refusePut && method === 'PUT' && path.includes('/t') ? { status: 403, body: ACCESS_DENIED } : 'pass'));
  }, 30_000);

  it('the reader keeps its file; t is in the mount and, once the store takes writes again, in the bucket', async () => {
    const cmd = driver();
    const t = join(S.dir, 't');
    const s = join(S.dir, 's');
    expect(await cmd(`put ${t} ${ORIGINAL}`)).toBe('OK');
    expect(await cmd(`put ${s} source`)).toBe('OK');
    expect(await cmd(`open r ${t} 0`)).toBe('OK');
    expect(await cmd('sha r')).toBe(`OK ${sha(ORIGINAL)}`);
    S.refuse(true);
    refusePut = true;
    const mv = await cmd(`rename ${s} ${t}`);
    S.refuse(false);
    refusePut = false;
    const out = [await cmd('fstat r'), await cmd('sha r'), await cmd(`stat ${t}`), await cmd('close r')];
    await wait(2500);
    expect({ mv: mv.startsWith('ERR'), out, after: await cmd(`psha ${t}`), bucket: (await S.bucket.body('t'))?.toString(), s: (await S.bucket.body('s'))?.toString() }).toEqual({
      mv: true,
      out: [`OK ${ORIGINAL.length} 644`, `OK ${sha(ORIGINAL)}`, `OK ${ORIGINAL.length} 644`, 'OK'],
      after: `OK ${sha(ORIGINAL)}`,
      bucket: ORIGINAL,
      s: 'source',
    });
  }, 40_000);
});
