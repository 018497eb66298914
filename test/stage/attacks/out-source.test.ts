// `stage out` walks the source before it copies anything. One entry it cannot stat (a dangling
// symlink, a name that is not UTF-8, which Node's readdir turns into U+FFFD and then cannot find)
// aborts the whole upload, nothing copied, with exit 2 and ESTUARY_STAGE_STORE's words
// ("listing s3://… failed … check --endpoint, the credentials and that the bucket exists"), blaming
// the store for a local file. Every other file should be copied and the bad one listed as failed
// (exit 1), as `stage in` does with keys it cannot write. Same for a subdirectory the user may not
// read (`EACCES … scandir`), run here as nobody.

import { afterAll, describe, expect, it } from 'vitest';
import { chmod, chown, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { startFakeS3 } from './stage-fake-s3.ts';
import { ESTUARY, stage } from './stage-run.ts';
import { NODE, startChild } from '../../helpers/process.ts';

afterAll(runTeardowns);

describe('stage out: a source entry that cannot be read', () => {
  it('a dangling symlink fails that entry only, and is not blamed on the store', async () => {
    const s3 = await startFakeS3();
    const src = await tempDir();
    await writeFile(join(src, 'a.txt'), 'a');
    await symlink('/nonexistent/estuary-attack', join(src, 'dangling'));
    const r = await stage(['out', src, 's3://bkt/p/', '--endpoint', s3.endpoint, '--state-dir', await tempDir()]);
    expect(r.out).not.toMatch(/check --endpoint, the credentials/);
    expect([...s3.objects.keys()]).toEqual(['p/a.txt']);
    expect(r.code).toBe(1);
  });

  it('a file whose name is not UTF-8 fails that file only, and is not blamed on the store', async () => {
    const s3 = await startFakeS3();
    const src = await tempDir();
    await writeFile(join(src, 'a.txt'), 'a');
    await writeFile(Buffer.concat([Buffer.from(`${src}/bad-`), Buffer.from([0xff]), Buffer.from('.txt')]), 'b');
    const r = await stage(['out', src, 's3://bkt/p/', '--endpoint', s3.endpoint, '--state-dir', await tempDir()]);
    expect(r.out).not.toMatch(/check --endpoint, the credentials/);
    expect([...s3.objects.keys()]).toContain('p/a.txt');
    expect(r.code).toBe(1);
  });

  it.runIf(process.getuid?.() === 0)('an unreadable subdirectory fails its files only, and is not blamed on the store', async () => {
    const s3 = await startFakeS3();
    const root = await tempDir();
    await chmod(root, 0o755);
    const src = join(root, 'src');
    await mkdir(join(src, 'private'), { recursive: true });
    await writeFile(join(src, 'a.txt'), 'a');
    await writeFile(join(src, 'private', 'z'), 'z');
    await chmod(join(src, 'private'), 0o700); // root's; the run is nobody's
    const state = join(root, 'state');
    await mkdir(state);
    await chown(state, 65534, 65534);
    const child = startChild('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', NODE, ESTUARY, 'stage', 'out', src, 's3://bkt/p/', '--endpoint', s3.endpoint, '--state-dir', state], {
      env: { ...process.env, HOME: state, AWS_ACCESS_KEY_ID: 'AK', AWS_SECRET_ACCESS_KEY: 'SK' },
    });
    const code = await child.exited;
    expect(child.output()).not.toMatch(/check --endpoint, the credentials/);
    expect([...s3.objects.keys()]).toEqual(['p/a.txt']);
    expect(code).toBe(1);
  });
});
