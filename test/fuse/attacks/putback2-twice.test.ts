// Two failed `mv s t` over the same file, the second after the kernel's entry of `t` expired and
// a second reader opened `t` (a new libfuse node, hidden as H2): the first reader's descriptors,
// known to libfuse by H1, still find the file, and its fchmod is kept.
// Each case runs on a default mount and on one with --write-back.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { failedMvOverReader, ORIGINAL, setup, type Setup, sha } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

const MOUNT_MODES: readonly [string, readonly string[]][] = [['default', []], ['--write-back', ['--write-back']]];

describe.skipIf(!fuse.ok || !minio.ok).each(MOUNT_MODES)('two failed mvs over the same file, each with a reader (%s)', (mode, flags) => {
  let S: Setup;
  beforeAll(async () => {
    S = await setup(`pb2-twice-${mode === 'default' ? 'd' : 'wb'}`, flags);
  }, 30_000);

  async function twice(name: string) {
    const { cmd, t, s } = await failedMvOverReader(S, S.dir, name, expect);
    // Past the kernel's entry of t: the next open looks t up again (a new libfuse node named t).
    expect(await cmd('sleep 1.3')).toBe('OK');
    expect(await cmd(`open r2 ${t} 0`)).toBe('OK');
    S.refuse(true);
    const mv = await cmd(`rename ${s} ${t}`);
    S.refuse(false);
    expect(mv).toMatch(/^ERR/);
    return { cmd, t };
  }

  it('both readers fstat the file, and the name stays, after the second failed mv', async () => {
    const { cmd, t } = await twice('a');
    const out = [await cmd('fstat r'), await cmd('fstat r2'), await cmd(`stat ${t}`), await cmd(`psha ${t}`)];
    expect(out).toEqual([`OK ${ORIGINAL.length} 644`, `OK ${ORIGINAL.length} 644`, `OK ${ORIGINAL.length} 644`, `OK ${sha(ORIGINAL)}`]);
  }, 40_000);

  it('the second reader closes first: the first still fstats, and t survives both closes', async () => {
    const { cmd, t } = await twice('b');
    const out = [await cmd('close r2'), await cmd('sleep 0.3'), await cmd('fstat r'), await cmd('fchmod r 600'), await cmd('close r')];
    await wait(2500);
    const after = [await cmd(`stat ${t}`), await cmd(`psha ${t}`)];
    expect({ out, after, bucket: (await S.bucket.body('b'))?.toString() }).toEqual({
      out: ['OK', 'OK', `OK ${ORIGINAL.length} 644`, 'OK', 'OK'],
      after: [`OK ${ORIGINAL.length} 600`, `OK ${sha(ORIGINAL)}`],
      bucket: ORIGINAL,
    });
  }, 40_000);

  it('the first reader closes first: the second still fstats, and t survives both closes', async () => {
    const { cmd, t } = await twice('c');
    const out = [await cmd('close r'), await cmd('sleep 0.3'), await cmd('fstat r2'), await cmd('fchmod r2 600'), await cmd('close r2')];
    await wait(2500);
    const after = [await cmd(`stat ${t}`), await cmd(`psha ${t}`)];
    expect({ out, after, bucket: (await S.bucket.body('c'))?.toString() }).toEqual({
      out: ['OK', 'OK', `OK ${ORIGINAL.length} 644`, 'OK', 'OK'],
      after: [`OK ${ORIGINAL.length} 600`, `OK ${sha(ORIGINAL)}`],
      bucket: ORIGINAL,
    });
  }, 40_000);

  it('after both put-backs, rm t while both readers are open: both keep their bytes, t is gone', async () => {
    const { cmd, t } = await twice('d');
    const out = [await cmd(`unlink ${t}`), await cmd('sha r'), await cmd('sha r2'), await cmd('fstat r'), await cmd('fstat r2'), await cmd(`stat ${t}`), await cmd('close r2'), await cmd('close r')];
    await wait(500);
    expect({ out, bucket: await S.bucket.body('d') }).toEqual({
      out: ['OK', `OK ${sha(ORIGINAL)}`, `OK ${sha(ORIGINAL)}`, `OK ${ORIGINAL.length} 644`, `OK ${ORIGINAL.length} 644`, 'ERR No such file or directory', 'OK', 'OK'],
      bucket: undefined,
    });
  }, 40_000);
});

describe.skipIf(!fuse.ok || !minio.ok).each(MOUNT_MODES)('a put-back file removed while a later reader holds it too (%s)', (mode, flags) => {
  let S: Setup;
  beforeAll(async () => {
    S = await setup(`pb2-rm2-${mode === 'default' ? 'd' : 'wb'}`, flags);
  }, 30_000);

  // After the kernel's entry expired, a second reader opens t through a new libfuse node, so
  // `rm t` is libfuse's own hide (H2). The first reader is still known by H1, which now stands for
  // H2; when the second reader closes, libfuse unlinks H2 and H1 stands for nothing.
  it('rm t, the later reader closes: the first reader still fstats the removed file', async () => {
    const { cmd, t } = await failedMvOverReader(S, S.dir, 'a', expect);
    const out = [await cmd('sleep 1.3'), await cmd(`open r2 ${t} 0`), await cmd(`unlink ${t}`), await cmd('fstat r'), await cmd('close r2'), await cmd('sleep 0.3'), await cmd('fstat r'), await cmd('sha r'), await cmd('close r')];
    expect(out).toEqual(['OK', 'OK', 'OK', `OK ${ORIGINAL.length} 644`, 'OK', 'OK', `OK ${ORIGINAL.length} 644`, `OK ${sha(ORIGINAL)}`, 'OK']);
  }, 40_000);
});
