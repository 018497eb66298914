// A file put back after a failed rename over it (docs/SEMANTICS.md, "unlink"): a descriptor opened
// through the kernel's cached entry of its name, right after the last close, is known to libfuse
// by the hidden name until its own close; the mount keeps that name for it, also past the two
// seconds that follow the first last close.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { failedMvOverReader, ORIGINAL, setup, type Setup, sha } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!fuse.ok || !minio.ok)('a descriptor opened through the cached entry after the last close', () => {
  let S: Setup;
  beforeAll(async () => {
    S = await setup('pb2-grace');
  }, 30_000);

  it('a reader opened right after the last close still fstats and fchmods 2.5 s later', async () => {
    const { cmd, t } = await failedMvOverReader(S, S.dir, 'a', expect);
    const out = [await cmd('close r'), await cmd('sleep 0.2'), await cmd(`open r2 ${t} 0`), await cmd('sleep 2.5'), await cmd('fstat r2'), await cmd('fchmod r2 600'), await cmd('sha r2'), await cmd('close r2')];
    await wait(300);
    expect({ out, t: await cmd(`stat ${t}`) }).toEqual({
      out: ['OK', 'OK', 'OK', 'OK', `OK ${ORIGINAL.length} 644`, 'OK', `OK ${sha(ORIGINAL)}`, 'OK'],
      t: `OK ${ORIGINAL.length} 600`,
    });
  }, 40_000);

  it('a writer opened right after the last close: fstat 2.5 s later shows its writes, and its close publishes them', async () => {
    const { cmd, t } = await failedMvOverReader(S, S.dir, 'b', expect);
    const out = [await cmd('close r'), await cmd('sleep 0.2'), await cmd(`open w ${t} ${0o2}`), await cmd('sleep 2.5'), await cmd('write w 90 4 16'), await cmd('fstat w'), await cmd('close w')];
    await wait(500);
    expect({ out, t: (await S.bucket.body('b'))?.toString() }).toEqual({
      out: ['OK', 'OK', 'OK', 'OK', 'OK', `OK ${ORIGINAL.length + 4} 644`, 'OK'],
      t: `${ORIGINAL}ZZZZ`,
    });
  }, 40_000);
});
