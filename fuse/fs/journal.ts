// The write-back journal (--write-back): close() returns once a file is safe on local disk, and
// the upload happens in the background, surviving a crash or a restart.
//
// A journal entry is two files in <cache-dir>/journal: `<id>.data`, the file's content, and
// `<id>.json`, the record naming its key and metadata. The data is fsynced and renamed in first,
// then the record is written to a temporary name, fsynced, renamed, and the directory fsynced:
// an entry counts only once its record exists, so a crash at any point leaves either a complete
// entry (uploaded at the next start) or leftovers that are deleted (the writer's close() had not
// returned, so nothing acknowledged is lost). Entries are uploaded oldest first, by a sequence
// number in the record (never the clock: see journal-record.ts); an entry superseded by a newer
// one for the same key is dropped, and one key never has two uploads in flight. A failed upload
// is retried with backoff, without end: the data was acknowledged. The folder is taken only when
// it is this user's alone and holds nothing else (journal-folder.ts), and a record that cannot be
// read, or names a key outside the mount's prefix, stops the start with one line naming it.
//
// Readers of an entry's data (a reopened file, a change that starts from it) pin the entry while
// they open or copy its file: an upload that finishes meanwhile takes the entry out of the queue
// at once (so nobody new is offered it) but leaves its data file until the last pin is gone.

import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, copyFile, type FileHandle, open, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WriteOptions } from '../s3/object-client.ts';
import { fsErrors } from '../errors.ts';
import { withoutUserinfo } from '../endpoint-address.ts';
import { FsError } from './errno.ts';
import { type DirLock, DirLocked } from '../../lib/dir-lock.ts';
import { holdLock } from './held-lock.ts';
import { legacyLockHolder } from './leftovers.ts';
import { prepareJournalDir } from './journal-folder.ts';
import {
  byAge,
  describeIdentity,
  IDENTITY_FILE,
  type JournalIdentity,
  type JournalRecord,
  journalFile,
  LEGACY_LOCK_FILE,
  LOCK_NAME,
  parseRecord,
  RECORD_VERSION,
  sameStore,
} from './journal-record.ts';
import type { FsLogger } from './log.ts';
import { type StagingFile, type StagingSettings, uploadFile } from './staging-file.ts';

export type { JournalIdentity, JournalRecord } from './journal-record.ts';

/** Uploads running at once from the journal. */
const UPLOAD_PARALLEL = 4;
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 30_000;

type UploadSettings = Pick<StagingSettings, 'client' | 'pool' | 'firstPartSize' | 'maxInFlight' | 'lateAborts'>;

async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Records and data files are this user's alone, like the folder. */
const FILE_MODE = 0o600;

/**
 * Refuses a journal that belongs to another store; a journal without an identity (new, or left by
 * a release that recorded none, which only an explicit --cache-dir reaches) takes this one.
 */
async function claimJournal(dir: string, given: JournalIdentity): Promise<void> {
  // A user name or password in the endpoint is no part of the store (S3 never reads them): it is
  // not stored here, and one an older release stored does not keep its files from this mount.
  const identity = { ...given, endpoint: withoutUserinfo(given.endpoint) };
  const path = join(dir, IDENTITY_FILE);
  const text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (text !== undefined) {
    let found: JournalIdentity | undefined;
    try {
      found = JSON.parse(text) as JournalIdentity;
    } catch {
      found = undefined;
    }
    if (typeof found?.endpoint !== 'string' || typeof found.bucket !== 'string' || typeof found.prefix !== 'string')
      throw fsErrors.journalDir(dir, `its ${IDENTITY_FILE} file cannot be read`);
    // Compared as stores, not as typed: `kek/run42/` is the store `kek/run42` recorded.
    if (!sameStore(found, identity)) throw fsErrors.journalIdentity(dir, describeIdentity(found), describeIdentity(identity));
    return;
  }
  const tmp = `${path}.tmp`;
  await writeFile(tmp, JSON.stringify(identity), { flush: true, mode: FILE_MODE });
  await rename(tmp, path);
  await fsyncDir(dir);
}

/** Journals this process holds, by directory: see lockJournal. */
const heldJournals = new Map<string, DirLock>();

/**
 * One mount per journal: two processes uploading and deleting the same entries would race. The
 * owner holds a kernel record lock (lib/dir-lock.ts), which drops when it dies however it dies, so
 * the restart after kill -9 or a crash takes the journal over and resumes its uploads; and which,
 * unlike a PID, means the same in every PID namespace (a container sharing the directory).
 * A journal this process already holds (one that stopped without closing, as a crash leaves it)
 * is taken over as it is.
 */
function lockJournal(dir: string, onLost: (err: unknown) => void): void {
  if (heldJournals.has(dir)) return;
  try {
    heldJournals.set(dir, holdLock(dir, LOCK_NAME, { onLost }));
  } catch (err) {
    if (err instanceof DirLocked) throw fsErrors.journalInUse(dir, err.pid ?? Number.NaN);
    throw err;
  }
}

async function unlockJournal(dir: string): Promise<void> {
  heldJournals.get(dir)?.release();
  heldJournals.delete(dir);
}

export class Journal {
  private readonly dir: string;
  private readonly s: UploadSettings;
  private readonly log: FsLogger;
  /** Entries not yet uploaded, oldest first. */
  private readonly queue: JournalRecord[] = [];
  private readonly running = new Set<string>();
  private readonly waiters: (() => void)[] = [];
  /** Entries whose data file someone is opening or copying, by id: see the file comment. */
  private readonly pins = new Map<string, number>();
  /** Uploaded entries whose data file waits for its last pin to go. */
  private readonly unlinkWhenUnpinned = new Set<string>();
  private stopped = false;
  private lockLost = false;
  /** The last upload attempt failed: the store is down or stalled (see settleJournal). */
  failing = false;

  private readonly identity: JournalIdentity | undefined;
  /** The next entry's `seq`: one more than any in the queue (see JournalRecord). */
  private nextSeq = 0;

  constructor(dir: string, settings: UploadSettings, log: FsLogger, identity?: JournalIdentity) {
    this.dir = dir;
    this.s = settings;
    this.log = log;
    this.identity = identity;
  }

  dataPath(id: string): string {
    return join(this.dir, `${id}.data`);
  }

  /** Reads what a previous run left, deletes incomplete leftovers, and starts uploading. */
  async open(): Promise<number> {
    await prepareJournalDir(this.dir);
    lockJournal(this.dir, (err) => {
      // Another process owns the journal now (held-lock.ts): uploading or adding beside it races.
      // Failing too, so that an unmount does not wait for uploads that no longer run here.
      this.stopped = this.lockLost = this.failing = true;
      this.log.error({ dir: this.dir, err: String(err) }, 'lost the write-back journal lock; closes now fail with EIO');
    });
    try {
      // An older release's lock: refused while its mount runs, removed once it is gone.
      const old = await legacyLockHolder(join(this.dir, LEGACY_LOCK_FILE));
      if (old !== undefined) throw fsErrors.journalInUse(this.dir, old);
      if (this.identity) await claimJournal(this.dir, this.identity);
      await unlink(join(this.dir, LEGACY_LOCK_FILE)).catch(() => undefined);
    } catch (err) {
      await unlockJournal(this.dir);
      throw err;
    }
    let records: JournalRecord[];
    try {
      records = await this.load();
    } catch (err) {
      await unlockJournal(this.dir);
      throw err;
    }
    records.sort(byAge);
    this.nextSeq = records.reduce((n, r) => Math.max(n, (r.seq ?? -1) + 1), 0);
    this.queue.push(...records);
    if (records.length > 0)
      this.log.warn({ pending: records.length }, 'resuming uploads left in the write-back journal');
    this.pump();
    return records.length;
  }

  /**
   * The complete entries in the folder; deletes what a crash left of incomplete ones (only files
   * named as the journal names them: prepareJournalDir refused the folder if it held others).
   */
  private async load(): Promise<JournalRecord[]> {
    const files = (await readdir(this.dir)).map((name) => ({ name, f: journalFile(name) }));
    const records: JournalRecord[] = [];
    const prefix = this.identity?.prefix;
    for (const { name, f } of files) {
      if (f.kind !== 'entry' || !f.record || f.tmp) continue;
      const path = join(this.dir, name);
      const record = parseRecord(name, await readFile(path, 'utf8'), prefix);
      if (typeof record === 'string') throw fsErrors.journalRecord(path, record);
      records.push(record);
    }
    const complete = new Set(records.map((r) => r.id));
    for (const { name, f } of files)
      if (f.kind === 'entry' && (f.tmp || !complete.has(f.id))) await unlink(join(this.dir, name)).catch(() => undefined);
    return records;
  }

  /** Takes over a staging file as a durable entry for `key`; returns once it is safe on disk. */
  async add(key: string, file: StagingFile, options: WriteOptions): Promise<void> {
    if (this.lockLost) throw new FsError('EIO', `the write-back journal ${this.dir} is owned by another process`);
    const record: JournalRecord = {
      version: RECORD_VERSION,
      id: `${Date.now().toString(36)}-${randomUUID()}`,
      key,
      size: file.size,
      options,
      createdMs: Date.now(),
      seq: this.nextSeq++,
    };
    await file.handOver(this.dataPath(record.id));
    await chmod(this.dataPath(record.id), FILE_MODE);
    const tmp = join(this.dir, `${record.id}.json.tmp`);
    await writeFile(tmp, JSON.stringify(record), { flush: true, mode: FILE_MODE });
    await rename(tmp, join(this.dir, `${record.id}.json`));
    await fsyncDir(this.dir);
    // In `seq` order, as a restart will read them: two closes of one key that overlap may finish
    // their writes in either order.
    let at = this.queue.length;
    while (at > 0 && byAge(this.queue[at - 1]!, record) > 0) at--;
    this.queue.splice(at, 0, record);
    this.pump();
  }

  /** The newest pending entry for `key`, whose data is the file's current content. */
  pending(key: string): JournalRecord | undefined {
    for (let i = this.queue.length - 1; i >= 0; i--) if (this.queue[i]!.key === key) return this.queue[i];
    return undefined;
  }

  /** Pending entries whose keys start with `prefix`, newest per key. */
  pendingUnder(prefix: string): JournalRecord[] {
    const byKey = new Map<string, JournalRecord>();
    for (const r of this.queue) if (r.key.startsWith(prefix)) byKey.set(r.key, r);
    return [...byKey.values()];
  }

  /**
   * Runs `use` on the data file of the newest pending entry for `key`, which stays on disk until
   * `use` settles even if the upload finishes meanwhile. Undefined when nothing is pending.
   */
  private async withPending<T>(key: string, use: (path: string, r: JournalRecord) => Promise<T>) {
    const r = this.pending(key);
    if (!r) return undefined;
    this.pins.set(r.id, (this.pins.get(r.id) ?? 0) + 1);
    try {
      return await use(this.dataPath(r.id), r);
    } finally {
      const left = this.pins.get(r.id)! - 1;
      if (left > 0) this.pins.set(r.id, left);
      else {
        this.pins.delete(r.id);
        if (this.unlinkWhenUnpinned.delete(r.id)) await unlink(this.dataPath(r.id)).catch(() => undefined);
      }
    }
  }

  /** Copies the pending content of `key` to `dest`; its size, or undefined when none is pending. */
  async copyPending(key: string, dest: string): Promise<number | undefined> {
    return this.withPending(key, async (path, r) => {
      await copyFile(path, dest);
      return r.size;
    });
  }

  /** Opens the pending content of `key`; the descriptor keeps it readable after its upload. */
  async openPending(key: string): Promise<FileHandle | undefined> {
    return this.withPending(key, (path) => open(path, 'r'));
  }

  get size(): number {
    return this.queue.length;
  }

  /** Resolves when no entry for a key starting with `prefix` is pending (all when omitted). */
  async settled(prefix = ''): Promise<void> {
    // Also while an upload runs: its entry leaves the queue before its files are deleted.
    const busy = () =>
      this.queue.some((r) => r.key.startsWith(prefix)) || [...this.running].some((k) => k.startsWith(prefix));
    while (busy()) {
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Stops starting uploads (for tests that simulate a crash). */
  stop(): void {
    this.stopped = true;
  }

  /** Gives the directory up to the next mount; call once nothing is pending. */
  async close(): Promise<void> {
    this.stopped = true;
    await unlockJournal(this.dir);
  }

  /** Uploads waiting out their backoff, each woken by calling it. */
  private readonly sleeping = new Set<() => void>();
  /** Uploads under way now (not waiting out a backoff). */
  attempting = 0;

  /** Tries every failed upload again now instead of at the end of its backoff (a mount stopping). */
  retryNow(): void {
    for (const wake of [...this.sleeping]) wake();
  }

  private pump(): void {
    if (this.stopped) return;
    for (const record of this.queue) {
      if (this.running.size >= UPLOAD_PARALLEL) return;
      if (this.running.has(record.key)) continue;
      this.running.add(record.key);
      this.uploadWithRetry(record).finally(() => {
        this.running.delete(record.key);
        for (const w of this.waiters.splice(0)) w();
        this.pump();
      });
    }
  }

  private async uploadWithRetry(record: JournalRecord): Promise<void> {
    let delay = RETRY_FIRST_MS;
    for (;;) {
      // A newer entry for the same key makes this one moot.
      const superseded = this.pending(record.key) !== record;
      try {
        if (!superseded) {
          this.attempting++;
          await this.upload(record).finally(() => this.attempting--);
        }
        this.failing = false;
        await this.remove(record);
        return;
      } catch (err) {
        if (this.stopped) return;
        this.failing = true;
        this.log.warn(
          { key: record.key, err: String(err), retryInMs: delay },
          'write-back upload failed; the data is safe in the journal and will be retried',
        );
        await new Promise<void>((resolve) => {
          const wake = () => {
            clearTimeout(timer);
            this.sleeping.delete(wake);
            resolve();
          };
          const timer = setTimeout(wake, delay);
          this.sleeping.add(wake);
        });
        delay = Math.min(RETRY_MAX_MS, delay * 2);
      }
    }
  }

  private async upload(record: JournalRecord): Promise<void> {
    const fh = await open(this.dataPath(record.id), constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      await uploadFile(this.s, fh, record.size, record.key, record.options);
    } finally {
      await fh.close();
    }
  }

  /**
   * Out of the queue first, so that pending() stops offering the entry before its files go; a
   * crash after that only uploads it once more at the next start.
   */
  private async remove(record: JournalRecord): Promise<void> {
    const i = this.queue.indexOf(record);
    if (i >= 0) this.queue.splice(i, 1);
    await unlink(join(this.dir, `${record.id}.json`));
    if (this.pins.has(record.id)) this.unlinkWhenUnpinned.add(record.id);
    else await unlink(this.dataPath(record.id)).catch(() => undefined);
  }
}
