// Attack on docs/SEMANTICS.md "unlink": the mount reads /proc/PID/syscall of the process behind a
// hide and, when it names a rename, removes nothing at the hide. An io_uring UNLINKAT is run by an
// io-wq worker thread, and that thread's /proc/TID/syscall shows the registers it was created
// with: a copy of its submitting thread's, at the moment that thread ran the task_work that made
// it. A worker made while the thread was returning from rename(2) says "82" for the rest of its
// life. Taken at its word, its UNLINKAT of an open file would be a rename's hide: the unlink would
// answer 0 and the object would stay in the bucket. The mount does not trust the syscall file of
// an io_uring worker (PF_IO_WORKER in /proc/TID/stat), so the rm removes the file.
// callers-uring.c: worker 1 blocks opening a FIFO, a second open and the UNLINKAT queue behind it
// at io-wq's limit of one worker; the limit goes to two, and while the main thread is in a rename
// (its copy held 1 s by the relay) worker 1 is woken and blocks in the second open, so io-wq asks
// the main thread (task_work) for a second worker, created as the rename returns. The plainer way
// (URING_LINK): an UNLINKAT linked to a pipe read; the read completes in task_work as the thread
// returns from the rename, and the UNLINKAT's worker, the ring's first, is made right there.

import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { CALLER_MODES, driver, setup, type Setup } from './undone-harness.ts';
import { readdir } from 'node:fs/promises';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();
let gcc = true;
try {
  execFileSync('gcc', ['--version'], { stdio: 'ignore' });
} catch {
  gcc = false;
}

/** How the worker comes to be made as the thread returns from its rename (see callers-uring.c). */
const WAYS: [string, NodeJS.ProcessEnv][] = [
  ['second worker of a blocked io-wq', {}],
  ['first worker, for an UNLINKAT linked to a pipe read', { URING_LINK: '1' }],
  ['the same, the file open for writing and written after the rm', { URING_LINK: '1', URING_WRITER: '1' }],
];

describe.skipIf(!fuse.ok || !minio.ok || !gcc).each(CALLER_MODES)('rm of an open file through io_uring, by a worker made during a rename (%s)', (mode, env) => {
  let S: Setup;
  let bin: string;
  let fifos: string;
  beforeAll(async () => {
    S = await setup(`callers-uring-${mode.replace(/ /g, '-')}`, [], (method, _path, headers) =>
      method === 'PUT' && String(headers['x-amz-copy-source'] ?? '').includes('slow-src') ? { lateMs: 1000 } : 'pass',
    env);
    const tmp = await tempDir('callers-uring-');
    bin = join(tmp, 'callers-uring');
    execFileSync('gcc', ['-O1', '-o', bin, new URL('./callers-uring.c', import.meta.url).pathname, '-lpthread']);
    fifos = tmp;
    execFileSync('mkfifo', [join(tmp, 'f1'), join(tmp, 'f2')]);
  }, 60_000);

  it.each(WAYS)('%s: the UNLINKAT answers 0 and the object is gone from the bucket', async (wayName, wenv) => {
    const way = wenv.URING_WRITER ? 'writer' : wenv.URING_LINK ? 'link' : 'blocked';
    // (The relay runs in this process: nothing here may block its event loop.)
    const cmd = driver();
    expect(await cmd(`put ${join(S.dir, `victim-${way}`)} must-go`)).toBe('OK');
    expect(await cmd(`put ${join(S.dir, `slow-src-${way}`)} moved`)).toBe('OK');
    const { stdout: out } = await promisify(execFile)(bin, [join(S.dir, `victim-${way}`), join(fifos, 'f1'), join(fifos, 'f2'), join(S.dir, `slow-src-${way}`), join(S.dir, `slow-dst-${way}`)], {
      timeout: 20_000,
      env: { ...process.env, ...wenv },
    });
    const unlink = /unlinkat (-?\d+)/.exec(out)?.[1];
    expect(unlink, out).toBe('0');
    await new Promise((r) => setTimeout(r, 500));
    // The worker's syscall line, printed by the program: "82" (rename) is what the mount read.
    expect({ body: (await S.bucket.body(`victim-${way}`))?.toString(), keys: (await S.bucket.keys()).filter((k) => k.endsWith(way)), listed: (await readdir(S.dir)).filter((k) => k.endsWith(way)).sort(), workers: out.split('\n').filter((l) => l.includes('iou-wrk')) }).toEqual({
      body: undefined,
      keys: [`slow-dst-${way}`],
      listed: [`slow-dst-${way}`],
      workers: expect.anything(),
    });
  }, 40_000);
});
