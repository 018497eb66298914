// A cache directory on a file system that can be made to hang: the passthrough FUSE file system
// of gwmap2-passfs.ts, mounted for one test and stopped with SIGSTOP to freeze it. Shared by the
// hung-file-system attacks on disk hits (gwmap2-hung-fs, gwmap3-head-hung-fs,
// gwmap3-threadpool-hung-fs).

import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { onTeardown, trackPid } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { get } from './disk-lib.ts';
import { sleep } from './gateway-lib.ts';

/** Mounts the passthrough file system at a new /tmp/<prefix>-mnt-*; torn down (thawed, unmounted) after the test. */
export async function mountPassFs(prefix: string): Promise<{ mnt: string; fsPid: number }> {
  const src = await tempDir(`${prefix}-src-`);
  const mnt = mkdtempSync(`/tmp/${prefix}-mnt-`);
  const fsProc: ChildProcess = spawn(process.execPath, [fileURLToPath(new URL('./gwmap2-passfs.ts', import.meta.url)), src, mnt], { stdio: 'ignore' });
  const fsPid = fsProc.pid!;
  trackPid(fsPid);
  onTeardown(async () => {
    try {
      process.kill(fsPid, 'SIGCONT');
    } catch {
      // gone
    }
    try {
      execFileSync('fusermount', ['-uz', mnt]);
    } catch {
      // not mounted
    }
    fsProc.kill('SIGKILL');
    await sleep(200);
    rmSync(mnt, { recursive: true, force: true });
  });
  for (let i = 0; i < 100; i++) {
    if (readFileSync('/proc/mounts', 'utf8').includes(` ${mnt} fuse`)) return { mnt, fsPid };
    await sleep(100);
  }
  throw new Error('the passthrough FUSE file system did not mount');
}

/** Whether a GET of `path` is answered (or refused) within `ms`. */
export async function answeredWithin(port: number, path: string, ms: number, headers: Record<string, string> = {}): Promise<boolean> {
  return Promise.race([get(port, path, headers, 20_000).then(() => true, () => true), sleep(ms).then(() => false)]);
}
