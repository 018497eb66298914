// Attack on docs/SEMANTICS.md "unlink": after a rename over an open file fails (traced callers:
// "nothing was removed and the file stays as it was, in the bucket and for its descriptors"), the
// file is renamed over again, successfully, or removed, while still open; then its descriptor is
// closed (libfuse then unlinks the hidden name it kept for the file). Expected: the second rename
// or the rm has its plain effect in the bucket, the descriptor's close removes nothing more, and a
// writer of the file publishes nothing after its file was replaced or removed.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { CALLER_MODES, driver, ORIGINAL, setup, sha, type Setup } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const extra of [[], ['--write-back']] as const) {
  describe.skipIf(!fuse.ok || !minio.ok).each(CALLER_MODES)(`a failed mv over an open file, then again ${extra.join(' ')} (%s)`, (mode, env) => {
    let S: Setup;
    beforeAll(async () => {
      S = await setup(`callers-again-${extra.length}-${mode.replace(/ /g, '-')}`, extra, undefined, env);
    }, 30_000);

    for (const [name, open, second] of [
      ['reader, then mv succeeds', 'r0', 'mv'],
      ['reader, then rm', 'r0', 'rm'],
      ['writer, then mv succeeds', 'w2', 'mv'],
      ['writer, then rm', 'w2', 'rm'],
    ] as const) {
      it(`${name}: the bucket ends as the second call left it`, async () => {
        const tag = name.replace(/[^a-z]/g, '');
        const cmd = driver();
        const t = join(S.dir, `${tag}-t`);
        const s = join(S.dir, `${tag}-s`);
        expect(await cmd(`put ${t} ${ORIGINAL}`)).toBe('OK');
        expect(await cmd(`put ${s} source`)).toBe('OK');
        expect(await cmd(`open h ${t} ${open.slice(1)}`)).toBe('OK');
        if (open[0] === 'w') expect(await cmd('write h 87 100 0')).toBe('OK');
        S.refuse(true);
        const first = await cmd(`rename ${s} ${t}`);
        S.refuse(false);
        const again = second === 'mv' ? await cmd(`rename ${s} ${t}`) : await cmd(`unlink ${t}`);
        const fst = await cmd('fstat h');
        const write = open[0] === 'w' ? await cmd('write h 88 10 100') : 'OK';
        const close = await cmd('close h');
        await pause(extra.length ? 4000 : 1500);
        expect({
          first: first.startsWith('ERR'),
          again,
          write,
          close,
          fst: fst.startsWith('OK'),
          t: (await S.bucket.body(`${tag}-t`))?.toString(),
          s: (await S.bucket.body(`${tag}-s`))?.toString(),
          read: await cmd(`cat ${t}`),
        }).toEqual({
          first: true,
          again: 'OK',
          write: 'OK',
          close: 'OK',
          fst: true,
          t: second === 'mv' ? 'source' : undefined,
          s: second === 'mv' ? undefined : 'source',
          read: second === 'mv' ? 'OK source' : 'ERR No such file or directory',
        });
        void sha;
      }, 40_000);
    }
  });
}
