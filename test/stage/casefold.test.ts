// `estuary stage in` onto a case-insensitive filesystem (a FUSE passthrough that folds case,
// helpers/casefold-fs.ts) and onto an ordinary one, from the same listing: the destination's
// case folding is probed, so `F` and `f` collide on the first and are two files on the second.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../helpers/cleanup.ts';
import { NODE, startChild } from '../helpers/process.ts';
import { required } from '../helpers/services.ts';
import { tempDir } from '../helpers/tmp.ts';
import { startHostileS3 } from './helpers/hostile-s3.ts';

afterAll(runTeardowns);

const ROOT = new URL('../../', import.meta.url).pathname;
const fuse = required('FUSE', existsSync('/dev/fuse'), 'a machine with /dev/fuse and the fuse package (fusermount)');

async function caseInsensitiveDir(): Promise<string> {
  const backing = await tempDir('estuary-casefold-back-');
  const mnt = await tempDir('estuary-casefold-mnt-');
  const child = startChild(NODE, [join(ROOT, 'test/stage/helpers/casefold-fs.ts'), backing, mnt]);
  onTeardown(async () => {
    if ((await readFile('/proc/mounts', 'utf8')).includes(` ${mnt} `)) await promisify(execFile)('fusermount', ['-uz', mnt]).catch(() => undefined);
    await child.stop('SIGKILL');
  });
  await child.waitFor(/mounted/, 20_000);
  return mnt;
}

describe.runIf(fuse.ok)('estuary stage in onto a case-insensitive filesystem', () => {
  it('refuses keys that differ only in case there, and copies them all onto a case-sensitive one', async () => {
    const body = { 'c/F': 'upper F', 'c/f': 'lower f', 'c/Dir/x': 'Dir/x', 'c/dir/X': 'dir/X', 'c/other': 'other' };
    const s3 = await startHostileS3({ bucket: 'hostile', objects: Object.entries(body).map(([key, b]) => ({ key, body: Buffer.from(b) })) });
    const env = { ...process.env, AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'y' };
    const stage = async (dst: string) => {
      const c = startChild(NODE, ['bin/estuary.js', 'stage', 'in', 's3://hostile/c/', dst, '--endpoint', s3.endpoint, '--state-dir', join(dst, '..', 'state'), '--log-format', 'json'], { cwd: ROOT, env });
      return { code: await c.exited, out: c.output() };
    };

    const folding = await caseInsensitiveDir();
    const r = await stage(folding);
    expect(r.code, r.out).toBe(1);
    // Listing order is byte order: upper case first, so `F` and `Dir/x` are the copies.
    expect(await readFile(join(folding, 'F'), 'utf8')).toBe('upper F');
    expect(await readFile(join(folding, 'Dir', 'x'), 'utf8')).toBe('Dir/x');
    expect(await readFile(join(folding, 'other'), 'utf8')).toBe('other');
    expect((await readdir(folding)).sort()).toEqual(['Dir', 'F', 'other']);
    expect(r.out).toMatch(/keys that map to one local path were not copied \(the first listed of each was\): "c\/Dir\/x", "c\/dir\/X" → Dir\/x; "c\/F", "c\/f" → F/);

    const plain = join(await tempDir('estuary-casefold-plain-'), 'dst');
    const p = await stage(plain);
    expect(p.code, p.out).toBe(0);
    expect((await readdir(plain)).sort()).toEqual(['Dir', 'F', 'dir', 'f', 'other']);
    expect(await readFile(join(plain, 'f'), 'utf8')).toBe('lower f');
  });
});
