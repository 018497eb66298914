// `stage in`: bucket prefix → local directory. The listing streams into a bounded queue that the
// copy workers drain, so a listing of any length (even one that never ends) holds at most
// QUEUE_ENTRIES in memory, and is cut at --max-objects. Each key is mapped to its local path as it
// is listed (keys.ts): keys no directory can hold are refused, and a key that maps to a path an
// earlier key already claimed is refused, never copied into the same file. Every write goes
// through Destination (dest.ts): no symlink followed, nothing outside the destination. A body
// that stops sending for --timeout is cut and read again from where it stopped, ATTEMPTS times.

import { createHash } from 'node:crypto';
import { lstat, rename, rm, type FileHandle } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type Destination, notOurs, stillSame } from './dest.ts';
import { stageErrors } from './errors.ts';
import { PathClaims, localRel } from './keys.ts';
import { hashFile, type Journal } from './local.ts';
import { identical } from './plan.ts';
import { BoundedQueue } from './queue.ts';
import type { RemoteEntry, Store } from './s3.ts';
import { each, fail, interrupted, isAbort, newSummary, settle, type Summary, type TransferOptions } from './transfer.ts';

/** Listed objects waiting for a worker: two listing pages, so the next page is fetched while copies run. */
const QUEUE_ENTRIES = 2000;

/** Reads of one object's body before it fails: a stall or a cut resumes from the partial file. */
const ATTEMPTS = 3;

export interface InOptions extends TransferOptions {
  /** A body (or response) that sends nothing for this long is cut and read again. */
  readonly timeoutMs: number;
}

interface Job {
  readonly r: RemoteEntry;
  /** The local path, '/'-separated, relative to the destination. */
  readonly path: string;
}

export async function stageIn(store: Store, prefix: string, dest: Destination, journal: Journal, o: InOptions): Promise<Summary> {
  const summary = newSummary();
  const claims = new PathClaims(dest.caseInsensitive);
  const queue = new BoundedQueue<Job>(QUEUE_ENTRIES);
  const abandon = () => queue.abandon();
  o.stop.addEventListener('abort', abandon, { once: true });
  let listError: unknown;
  const listing = list(store, prefix, claims, queue, summary, o).then(
    () => queue.close(),
    (err: unknown) => {
      if (!o.stop.aborted) listError = err; // a listing cut by a signal is listed again next time
      queue.abandon(); // files in flight finish; nothing more starts
    },
  );
  await each(() => queue.take(), o.parallel, o.stop, (job) =>
    settle(job.path, job.r.size, o, summary, () => fetchOne(job, store, dest, journal, summary, o), () => saved(job, dest, journal)),
  );
  await listing;
  o.stop.removeEventListener('abort', abandon);
  summary.collisions = claims.collisions();
  if (listError !== undefined) throw listError;
  return summary;
}

async function list(store: Store, prefix: string, claims: PathClaims, queue: BoundedQueue<Job>, summary: Summary, o: InOptions): Promise<void> {
  let seen = 0;
  const where = `s3://${store.bucket}/${prefix}`;
  for await (const page of store.pages(prefix, o.stop)) {
    for (const r of page) {
      if (o.stop.aborted) return;
      if (++seen > o.maxObjects) throw stageErrors.tooMany(where, o.maxObjects);
      const l = localRel(r.rel);
      const claim = 'path' in l ? claims.claim(r.key, l.path) : 'refused';
      if (claim === 'repeat') continue;
      if (claim !== 'first') {
        const why = 'refused' in l ? l.refused : `it maps to the same local path (${l.path}) as an earlier key`;
        const error = `key ${JSON.stringify(r.key)} not written: ${why}`;
        fail(summary, o, r.rel, r.size, error);
        continue;
      }
      summary.listed.files++;
      summary.listed.bytes += r.size;
      o.onListed(summary.listed.files, summary.listed.bytes, false);
      await queue.put({ r, path: (l as { path: string }).path });
    }
  }
  if (o.stop.aborted) return;
  summary.listed.complete = true;
  o.onListed(summary.listed.files, summary.listed.bytes, true);
  if (seen === 0) throw stageErrors.empty(where);
}

async function fetchOne(job: Job, store: Store, dest: Destination, journal: Journal, summary: Summary, o: InOptions): Promise<'copied' | 'skipped'> {
  await dest.parents(job.path);
  const here = await dest.existing(job.path);
  if (here?.isFile() && here.size === job.r.size) {
    const there = await store.head(job.r.key, o.cut);
    if (there) {
      const h = await hashFile(dest.path(job.path), here.size, !there.sha256, o.stop);
      const remote = { rel: job.path, size: there.size, sha256: there.sha256, md5: there.md5 };
      if (identical(remote, { rel: job.path, size: here.size, ...h })) return 'skipped';
    }
  }
  await download(job, store, dest, journal, summary, o);
  return 'copied';
}

/** What of an interrupted download is on disk for the next run (only journalled ones resume). */
async function saved(job: Job, dest: Destination, journal: Journal): Promise<string | undefined> {
  if (!journal.download(job.r.key)) return undefined;
  const st = await lstat(dest.partial(job.path, job.r.key)).catch(() => undefined);
  return st && st.size > 0 ? `${(st.size / 2 ** 20).toFixed(1)} MiB` : undefined;
}

/** An error that another attempt cannot cure. */
const final = (message: string) => Object.assign(new Error(message), { final: true });

async function download(job: Job, store: Store, dest: Destination, journal: Journal, summary: Summary, o: InOptions): Promise<void> {
  const state = { etag: journal.download(job.r.key)?.etag, attempt: 1 };
  for (;; state.attempt++) {
    try {
      await attempt(job, store, dest, journal, summary, o, state);
      return;
    } catch (err) {
      // Cut by a signal (the body's own error may come first, e.g. 'aborted'): saved, not failed.
      if (o.cut.aborted || (o.stop.aborted && (isAbort(err) || journal.download(job.r.key)))) throw interrupted();
      if ((err as { final?: boolean }).final || state.attempt >= ATTEMPTS || o.stop.aborted) {
        // A journalled partial file waits for the next run; any other is of no further use.
        if (!journal.download(job.r.key)) await rm(dest.partial(job.path, job.r.key), { force: true });
        throw describe(err, store, job.r.key, state.attempt, o.timeoutMs);
      }
    }
  }
}

function describe(err: unknown, store: Store, key: string, attempts: number, timeoutMs: number): Error {
  const url = `s3://${store.bucket}/${key}`;
  const e = err as { name?: string; message?: string; final?: boolean };
  if (e.final) return new Error(`${url}: ${e.message}`);
  const why = e.name === 'TimeoutError' || e.name === 'IdleTimeout' ? `no data for ${timeoutMs / 1000} s` : (e.message ?? String(err));
  return new Error(`${url}: ${why} (${attempts} attempt${attempts === 1 ? '' : 's'}); check the store and run again (--timeout sets the wait)`);
}

async function attempt(job: Job, store: Store, dest: Destination, journal: Journal, summary: Summary, o: InOptions, state: { etag?: string; attempt: number }): Promise<void> {
  const { r, path } = job;
  const partial = dest.partial(path, r.key);
  // Resume a partial file only if the object is still the one it was started from (If-Match).
  const st = state.etag ? await lstat(partial).catch(() => undefined) : undefined;
  // A partial file that is not plainly ours (a hard link, another user's) is never written into:
  // it is removed and the object fetched from its start.
  let from = st && notOurs(st) === undefined ? st.size : 0;
  // As long as the object (killed between the last byte and the rename): the range would be
  // empty, so fetch it again whole rather than trust bytes never verified.
  if (from >= r.size) from = 0;
  // The request waits for the deadline (a small file may still finish), a body of a journalled one not.
  let got = from > 0 ? await store.read(r.key, from, state.etag, o.cut) : undefined;
  if (!got) {
    from = 0;
    got = await store.read(r.key, 0, undefined, o.cut);
    if (!got) throw final('the object vanished from the store');
  }
  // Counted once: a retry within this run continuing its own partial file resumes nothing earlier.
  if (from > 0 && state.attempt === 1) {
    o.onResume(path, `${(from / 2 ** 20).toFixed(1)} MiB already downloaded`, from);
    summary.resumedBytes += from;
  }
  state.etag = got.etag;
  // A GET without Content-Length or Content-Range (sent chunked): the listed size stands, and the
  // checksum decides as ever.
  const total = got.size ?? r.size;
  // Only files worth resuming are journalled: a small one is cheaper to fetch again.
  const journalled = total > o.partSize;
  if (journalled) await journal.setDownload(r.key, { etag: got.etag, size: total });
  const fh = await dest.openPartial(partial, from > 0).catch((err: Error) => {
    got.body.destroy();
    throw final(err.message);
  });
  const mine = await fh.stat().catch(async (err: unknown) => {
    got.body.destroy();
    await fh.close().catch(() => undefined);
    throw err;
  });
  // The write stream closes (and, with flush, fsyncs) the file when it ends or fails.
  const sums = await receive(fh, from, got, journalled, o).catch(async (err: unknown) => {
    await fh.close().catch(() => undefined);
    throw err;
  });
  // Only the file this run wrote and hashed is published: if another process replaced it under
  // that name meanwhile, what is there now was verified by nobody.
  if (!(await stillSame(partial, mine))) throw final('the partial file was replaced by another process during the download; run again');
  const size = (await lstat(partial)).size;
  if (size !== total) throw new Error(`got ${size} of ${total} bytes`);
  const wantMd5 = got.md5;
  if ((got.sha256 && got.sha256 !== sums.sha256) || (!got.sha256 && wantMd5 && wantMd5 !== sums.md5)) {
    await rm(partial, { force: true });
    if (journalled) await journal.setDownload(r.key, undefined);
    throw final('content does not match the checksum the store holds; the partial file was removed');
  }
  await dest.existing(path); // refuses a symlink planted at the final name meanwhile
  await rename(partial, dest.path(path));
  if (journalled) await journal.setDownload(r.key, undefined);
}

/** Writes the body after the `from` bytes already in `fh`, hashing all of it. */
async function receive(fh: FileHandle, from: number, got: { body: NodeJS.ReadableStream; sha256?: string; md5?: string }, journalled: boolean, o: InOptions): Promise<{ sha256: string; md5?: string }> {
  const sha = createHash('sha256');
  // MD5 costs three times the CPU of SHA-256 (with SHA extensions): only when nothing else checks.
  const md5 = got.sha256 || !got.md5 ? undefined : createHash('md5');
  const buf = from > 0 ? Buffer.allocUnsafe(256 * 1024) : Buffer.alloc(0);
  for (let pos = 0; pos < from; ) {
    const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, from - pos), pos);
    if (bytesRead === 0) break;
    sha.update(buf.subarray(0, bytesRead));
    md5?.update(buf.subarray(0, bytesRead));
    pos += bytesRead;
  }
  const hashing = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      timer.refresh();
      sha.update(chunk);
      md5?.update(chunk);
      o.onBytes(chunk.length);
      cb(null, chunk);
    },
  });
  // A read-idle timeout of its own: the SDK's socket timeout may be gone once headers arrived.
  const timer = setTimeout(() => hashing.destroy(Object.assign(new Error('idle'), { name: 'IdleTimeout' })), o.timeoutMs);
  try {
    // A large download stops at once on a signal (its partial file and journal entry resume it);
    // a small one, which would start over, finishes unless the deadline cuts it.
    await pipeline(got.body, hashing, fh.createWriteStream({ start: from, flush: true }), { signal: journalled ? o.stop : o.cut });
  } finally {
    clearTimeout(timer);
  }
  return { sha256: sha.digest('hex'), md5: md5?.digest('hex') };
}
