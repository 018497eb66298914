// What a mount that died (kill -9, a crash, power loss) leaves behind, and how the next start
// cleans it up. Two kinds:
//  - staging files on local disk. Each mount process keeps its own in `<cache-dir>/staging-<pid>`,
//    so a start removes the directories of processes that no longer run and leaves those of a
//    mount still running on the same cache directory alone.
//  - multipart uploads that were started and neither completed nor aborted. They are invisible in
//    listings but billed by AWS until aborted. Which ones are ours cannot be known after a crash
//    (the upload ids died with the process), so those under the mount's prefix older than a
//    configurable age are aborted: old enough that no live writer on any host still feeds them.

import { lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ObjectClient, PendingUpload } from '../s3/object-client.ts';
import { pidAlive } from '../../lib/pid.ts';


const STAGING_DIR = /^staging-(\d+)$/;

/** This process's staging directory under `cacheDir`. */
export function stagingDirOf(cacheDir: string, pid = process.pid): string {
  return join(cacheDir, `staging-${pid}`);
}

export interface RemovedStaging {
  readonly dirs: readonly string[];
  readonly files: number;
  readonly bytes: number;
}

/** Removes the staging directories of mount processes that no longer run. */
export async function removeDeadStaging(cacheDir: string): Promise<RemovedStaging> {
  const dirs: string[] = [];
  let files = 0;
  let bytes = 0;
  for (const name of await readdir(cacheDir).catch(() => [] as string[])) {
    const m = STAGING_DIR.exec(name);
    if (!m || Number(m[1]) === process.pid || pidAlive(Number(m[1]))) continue;
    const dir = join(cacheDir, name);
    for (const f of await readdir(dir).catch(() => [] as string[])) {
      files++;
      bytes += (await lstat(join(dir, f)).catch(() => undefined))?.size ?? 0;
    }
    await rm(dir, { recursive: true, force: true });
    dirs.push(dir);
  }
  return { dirs, files, bytes };
}

/** Aborts the unfinished multipart uploads under `prefix` started more than `ageMs` before `now`. */
export async function abortStaleUploads(
  client: ObjectClient,
  prefix: string,
  ageMs: number,
  now = Date.now(),
): Promise<PendingUpload[]> {
  const stale = (await client.listUploads(prefix)).filter((u) => u.initiated.getTime() <= now - ageMs);
  for (const u of stale) await client.abortMultipart(u.key, u.uploadId);
  return stale;
}
