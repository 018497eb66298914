// The journal is rewritten after every part through one promise chain
// (`this.#writing = this.#writing.then(save)`). Once one write fails (the state directory's disk
// was full for a moment), the chain stays rejected: every later journal write of the run fails
// with that first error, even after space is back, so every multipart file after it fails too.
// Here the state directory is a small tmpfs: full while the first file starts, freed before the
// second starts; the second file should be copied.

import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { startFakeS3 } from './stage-fake-s3.ts';
import { stage } from './stage-run.ts';

afterAll(runTeardowns);

const MiB = 2 ** 20;
const isRoot = process.getuid?.() === 0;

describe.runIf(isRoot)('stage out: a journal write that failed once', () => {
  it('does not fail every later file of the run once space is back', async () => {
    const state = join(await tempDir(), 'state');
    await mkdir(state);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', state]);
    onTeardown(() => void execFileSync('umount', ['-l', state]));
    const filler = join(state, 'filler');
    await writeFile(filler, Buffer.alloc(64 * 1024)).catch(() => undefined); // fills it (ENOSPC at the end is fine)
    const src = await tempDir();
    await writeFile(join(src, 'a.bin'), randomBytes(6 * MiB));
    await writeFile(join(src, 'b.bin'), randomBytes(6 * MiB));
    const s3 = await startFakeS3();
    let creates = 0;
    s3.hook = async (req) => {
      if (req.method === 'POST' && req.url.searchParams.has('uploads') && ++creates === 2) await rm(filler); // space is back before b.bin starts
      return false;
    };
    const r = await stage(['out', src, 's3://bkt/p/', '--endpoint', s3.endpoint, '--state-dir', state, '--part-size', '5MiB', '--parallel', '1']);
    expect(creates).toBe(2);
    expect(r.summary?.failed.map((f) => f.rel)).toEqual(['a.bin']); // a.bin could not be journalled: fair
    expect([...s3.objects.keys()]).toContain('p/b.bin');
  });
});
