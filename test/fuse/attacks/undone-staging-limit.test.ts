// A failed `mv s t` over a file open for reading puts the file back from its reader's copy. A
// reader of a file above --staging-limit keeps no copy: the rename's hide deleted the object, and
// when the rename then fails the file stays removed (docs/SEMANTICS.md, "unlink"), and the log
// must say so; the source stays. (--staging-limit 100k stands for the default 16 GiB.)

import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { driver, setup } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();

describe.skipIf(!fuse.ok || !minio.ok)('a failed mv over a file above --staging-limit that is being read', () => {
  it('leaves the file removed, the source in place, and says so in the log', async () => {
    const S = await setup('undone-staging', ['--staging-limit', '100k']);
    const cmd = driver();
    const t = join(S.dir, 'h');
    const s = join(S.dir, 'h-src');
    expect(await cmd(`open w ${t} ${0o1 | 0o100 | 0o1000}`)).toBe('OK');
    expect(await cmd('write w 72 300000 0')).toBe('OK');
    expect(await cmd('close w')).toBe('OK');
    expect(await cmd(`put ${s} source`)).toBe('OK');
    expect(await cmd(`open r ${t} 0`)).toBe('OK');
    S.refuse(true);
    const mv = await cmd(`rename ${s} ${t}`);
    S.refuse(false);
    await cmd('close r');
    await new Promise((r) => setTimeout(r, 1500));
    expect({
      mv,
      bucket: await S.bucket.sha('h'),
      mount: await cmd(`psha ${t}`),
      source: await cmd(`cat ${s}`),
      logged: S.log().includes('nothing held a copy to put back'),
    }).toEqual({ mv: expect.stringMatching(/^ERR/), bucket: undefined, mount: 'ERR No such file or directory', source: 'OK source', logged: true });
  }, 40_000);
});
