// Attack on docs/SEMANTICS.md "unlink": the caller of a rename over an open file, or of an rm of
// an open file, is killed (SIGKILL) while the store holds its request (the relay delays the
// CopyObject or the DELETE by 1 s). The kernel waits the FUSE request out, so the mount should
// finish what it started: mv → the target holds the source, no source key; rm → no key. The
// open reader keeps its bytes, and its close afterwards removes nothing more.

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns, trackPid, untrackPid } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { CALLER_MODES, driver, ORIGINAL, setup, sha, type Setup } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function killedDuring(argv: string[]): Promise<void> {
  const p = spawn(argv[0]!, argv.slice(1), { stdio: 'ignore' });
  trackPid(p.pid);
  const closed = new Promise((r) => p.on('close', r));
  await pause(300);
  p.kill('SIGKILL');
  await closed;
  untrackPid(p.pid);
}

describe.skipIf(!fuse.ok || !minio.ok).each(CALLER_MODES)('the caller killed while the store holds its request (%s)', (mode, env) => {
  let S: Setup;
  beforeAll(async () => {
    S = await setup(`callers-killed-${mode.replace(/ /g, '-')}`, [], (method, path, headers) =>
      (method === 'PUT' && headers['x-amz-copy-source'] !== undefined && path.endsWith('/m-t')) || (method === 'DELETE' && path.endsWith('/u-t'))
        ? { lateMs: 1000 }
        : 'pass',
    env);
  }, 30_000);

  it('mv over an open file: the target ends with the source, no source key, the reader keeps its bytes', async () => {
    const cmd = driver();
    const t = join(S.dir, 'm-t');
    const s = join(S.dir, 'm-s');
    expect(await cmd(`put ${t} ${ORIGINAL}`)).toBe('OK');
    expect(await cmd(`put ${s} source`)).toBe('OK');
    expect(await cmd(`open r ${t} 0`)).toBe('OK');
    await killedDuring(['python3', '-c', 'import os,sys; os.rename(sys.argv[1], sys.argv[2])', s, t]);
    await pause(2000);
    const reader = await cmd('sha r');
    const close = await cmd('close r');
    await pause(500);
    expect({ reader, close, t: (await S.bucket.body('m-t'))?.toString(), s: (await S.bucket.body('m-s'))?.toString(), read: await cmd(`cat ${t}`) }).toEqual({
      reader: `OK ${sha(ORIGINAL)}`,
      close: 'OK',
      t: 'source',
      s: undefined,
      read: 'OK source',
    });
  }, 40_000);

  it('rm of an open file: no key is left, the reader keeps its bytes', async () => {
    const cmd = driver();
    const t = join(S.dir, 'u-t');
    expect(await cmd(`put ${t} ${ORIGINAL}`)).toBe('OK');
    expect(await cmd(`open r ${t} 0`)).toBe('OK');
    await killedDuring(['python3', '-c', 'import os,sys; os.unlink(sys.argv[1])', t]);
    await pause(2000);
    const reader = await cmd('sha r');
    const close = await cmd('close r');
    await pause(500);
    expect({ reader, close, t: (await S.bucket.body('u-t'))?.toString(), read: await cmd(`cat ${t}`) }).toEqual({
      reader: `OK ${sha(ORIGINAL)}`,
      close: 'OK',
      t: undefined,
      read: 'ERR No such file or directory',
    });
  }, 40_000);
});
