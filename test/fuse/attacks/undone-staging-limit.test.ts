// A failed `mv s t` over a file open for reading by a reader of a file above --staging-limit,
// which can keep no copy of it. A mount that knows the hide is a rename's (the caller's system
// call) removes nothing before the rename, and the failed rename leaves t and s as they were. One
// that cannot tell removes t first and has no copy to put back: t stays removed, and the log says
// so (docs/SEMANTICS.md, "unlink"). (--staging-limit 100k stands for the default 16 GiB.)

import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { sha256 } from './hidden-harness.ts';
import { CALLER_MODES, driver, setup, UNTRACEABLE } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();

describe.skipIf(!fuse.ok || !minio.ok).each(CALLER_MODES)('a failed mv over a file above --staging-limit that is being read (%s)', (mode, env) => {
  const traced = env !== UNTRACEABLE;
  it(traced ? 'leaves the file and the source in place' : 'leaves the source in place, the file removed, and says so in the log', async () => {
    const S = await setup(`undone-staging-${mode.replace(/ /g, '-')}`, ['--staging-limit', '100k'], undefined, env);
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
    const whole = sha256(Buffer.alloc(300000, 72));
    expect({ mv, bucket: await S.bucket.sha('h'), mount: await cmd(`psha ${t}`), source: await cmd(`cat ${s}`), logged: S.log().includes('nothing held a copy to put back') }).toEqual({
      mv: expect.stringMatching(/^ERR/),
      bucket: traced ? whole : undefined,
      mount: traced ? `OK ${whole}` : 'ERR No such file or directory',
      source: 'OK source',
      logged: !traced,
    });
  }, 40_000);
});
