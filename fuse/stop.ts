// The mount's stop after its signal: waiting for the files still open, then for the write-back
// journal (docs/SEMANTICS.md, "Mounting, unmounting, fstab" and "Write-back").

import type { FuseMount } from './adapter.ts';
import type { Filesystem } from './fs/filesystem.ts';
import { FS_LOG_CODES } from './errors.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * After the lazy unmount, files already open stay usable: wait until they are closed (their
 * uploads done) and no operation is in flight, or until the kernel has ended the connection (it
 * does at the last close, and may drop that close's RELEASE: the files still counted open are
 * closed then, and fs.drain tries once more what a failed close did not upload). Every open file
 * is waited for, even past the shutdown deadline: a second signal is the way to give up on them.
 */
export async function waitForOpenFiles(
  fs: Filesystem,
  mount: FuseMount,
  log: { info(o: object, m: string): void },
): Promise<void> {
  let lastReport = 0;
  for (;;) {
    const { open, dirty } = fs.openFiles;
    const busy = mount.inFlight.count;
    if (busy === 0 && (open === 0 || mount.sessionEnded())) return;
    if (Date.now() - lastReport > 5000) {
      log.info({ open, dirty, inFlight: busy }, 'waiting for open files to be closed and uploaded');
      lastReport = Date.now();
    }
    await sleep(50);
  }
}

/**
 * Waits for the write-back journal to upload what it holds. A store that keeps failing (down,
 * stalled past --request-timeout) would hold the unmount forever: once the shutdown deadline has
 * passed and the last upload attempt failed, the files stay in the journal for the next mount.
 */
export async function settleJournal(
  fs: Filesystem,
  deadline: AbortSignal,
  cacheDir: string,
  log: { info(o: object, m: string): void; warn(o: object, m: string): void },
): Promise<void> {
  const journal = fs.journal;
  if (!journal) return;
  const queued = journal.size;
  if (queued > 0) log.info({ pending: queued }, 'waiting for write-back uploads to finish');
  let settled = false;
  const done = fs.journalSettled().then(() => (settled = true));
  // A failed upload waits out its backoff (up to 30 s): while stopping, each is tried again every
  // second, so a store back meanwhile gets them, and "not taking uploads" below is what the last
  // try found.
  let retried = Date.now();
  while (!settled) {
    if (deadline.aborted && journal.failing && journal.attempting === 0) {
      log.warn(
        { pending: journal.size, journal: cacheDir, code: FS_LOG_CODES.journalKept },
        'the store is not taking uploads: the files stay in the write-back journal and upload at the next mount',
      );
      return;
    }
    if (journal.failing && Date.now() - retried >= 1000) {
      retried = Date.now();
      journal.retryNow();
    }
    await Promise.race([done, sleep(100)]);
  }
}
