// Attack on docs/SEMANTICS.md "unlink": a rename over an open file, whose copy the store refuses,
// made by callers of several kinds. When the mount reads the caller's system call it "removes
// nothing at the hide ... if the rename fails nothing was removed": the relay must see no DELETE
// (and no put-back PUT) of the target's key. A caller whose call the mount cannot tell would
// show as a DELETE then a PUT of the target (the fallback).

import { spawn } from 'node:child_process';
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { driver, ORIGINAL, setup, sha, type Setup, UNTRACEABLE } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();

const RENAME = 'import os,sys\ntry:\n  os.rename(sys.argv[1], sys.argv[2]); print("OK")\nexcept OSError as e: print("ERR", os.strerror(e.errno))';
const THREAD = `import threading\nt=threading.Thread(target=lambda: exec(${JSON.stringify(RENAME)}))\nt.start(); t.join()`;

function run(argv: string[]): Promise<string> {
  return new Promise((resolve) => {
    const p = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (out += d));
    p.on('close', (code) => resolve(`${out.trim()} (exit ${code})`));
  });
}

const CALLERS: [string, (s: string, t: string) => string[]][] = [
  ['python, main thread', (s, t) => ['python3', '-c', RENAME, s, t]],
  ['python, another thread', (s, t) => ['python3', '-c', THREAD, s, t]],
  ['in another pid namespace', (s, t) => ['unshare', '-p', '-f', '--mount-proc', 'python3', '-c', RENAME, s, t]],
  ['mv across directories', (s, t) => ['mv', s, t]],
];

const NOBODY: [string, (s: string, t: string) => string[]][] = [
  ['user nobody, --allow-other', (s, t) => ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '/usr/bin/mv', s, t]],
];

describe.skipIf(!fuse.ok || !minio.ok).each([
  ['root callers', [] as string[], CALLERS],
  ['another user', ['--allow-other'], NOBODY],
] as const)('a failed rename over an open file, by callers of several kinds (%s)', (_who, extra, callers) => {
  let S: Setup;
  const seen: string[] = [];
  beforeAll(async () => {
    S = await setup(`callers-kinds-${extra.length}`, extra, (method, path) => {
      seen.push(`${method} ${path}`);
      return 'pass';
    }, process.env.CALLERS_CONTROL ? UNTRACEABLE : {});
  }, 30_000);

  it.each(callers)('%s: the rename fails, the target\'s object is never deleted nor put back, its reader and the bucket keep it', async (name, argv) => {
    const tag = name.replace(/[^a-z]/g, '');
    const dir = join(S.dir, tag);
    await mkdir(join(dir, 'other'), { recursive: true, mode: 0o777 });
    await chmod(dir, 0o777);
    const t = join(dir, 'target');
    const s = name.startsWith('mv') ? join(dir, 'other', 'src') : join(dir, 'src');
    const cmd = driver();
    expect(await cmd(`put ${t} ${ORIGINAL}`)).toBe('OK');
    expect(await cmd(`put ${s} source`)).toBe('OK');
    expect(await cmd(`open r ${t} 0`)).toBe('OK');
    seen.length = 0;
    S.refuse(true);
    const out = await run(argv(s, t));
    S.refuse(false);
    const touched = seen.filter((l) => /^(DELETE|PUT) /.test(l) && l.endsWith(`/${tag}/target`));
    const key = `${tag}/target`;
    expect({ out, touched, reader: await cmd('sha r'), target: (await S.bucket.body(key))?.toString() }).toEqual({
      out: expect.stringMatching(/^(ERR|(\/usr\/bin\/)?mv: ).*\(exit [01]\)$/),
      touched: [],
      reader: `OK ${sha(ORIGINAL)}`,
      target: ORIGINAL,
    });
    expect(await cmd('close r')).toBe('OK');
  }, 40_000);
});
