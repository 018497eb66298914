// `stage out`, and what both directions share. Each file is compared (plan.ts), then copied with
// bounded memory (files and parts stream from and to disk), verified, and only then made visible:
// an upload completes its multipart upload last, a download (download.ts) is renamed from its
// partial file last. The journal (local.ts) records every acknowledged part and every partial
// download, so a transfer killed at any point resumes where it stopped.

import { stat } from 'node:fs/promises';
import { hashFile, type Journal, type LocalEntry, walk } from './local.ts';
import { identical, parts, plan, type Action } from './plan.ts';
import { CHANGED, isNoSuchUpload, type Store } from './s3.ts';

export type Outcome = 'copied' | 'skipped' | 'failed' | 'interrupted';

export interface TransferOptions {
  /** Files transferred at once. */
  readonly parallel: number;
  readonly partSize: number;
  /** Parts of one file uploaded at once. */
  readonly partParallel: number;
  /** Most objects a listing may hold (the destination's of `stage out`, the source's of `stage in`). */
  readonly maxObjects: number;
  /** Aborted on the first SIGINT/SIGTERM: no new file or part starts; downloads checkpoint. */
  readonly stop: AbortSignal;
  /** Aborted at the shutdown deadline: whatever is still in flight is cut. */
  readonly cut: AbortSignal;
  /** stage out: follow symlinks that lead outside the source directory. */
  readonly followSourceSymlinks?: boolean;
  readonly onBytes: (n: number) => void;
  /** Files and bytes found to copy or compare so far (grows while a listing streams in). */
  readonly onListed: (files: number, bytes: number, complete: boolean) => void;
  readonly onFile: (rel: string, outcome: Outcome, bytes: number, detail?: string) => void;
  /** A file picks up where an earlier run stopped: what was already there. */
  readonly onResume: (rel: string, what: string, bytes: number) => void;
}

export interface Summary {
  copied: number;
  skipped: number;
  /** Files that failed or were refused, the first MAX_FAILED_LISTED of them (the rest counted in failedMore). */
  failed: { rel: string; error: string }[];
  /** Failures beyond those listed in `failed`: a store can list any number of keys to refuse. */
  failedMore: number;
  bytes: number;
  resumedParts: number;
  resumedBytes: number;
  /** Files listed (to copy or compare); `complete` once the whole listing was seen. */
  listed: { files: number; bytes: number; complete: boolean };
  /** Files stopped by a signal, with what of them is saved for the next run. */
  interrupted: { rel: string; saved: string }[];
  /** Keys refused because another key of the listing maps to the same local path. */
  collisions: { path: string; keys: string[]; more: number }[];
}

export function newSummary(): Summary {
  return {
    copied: 0, skipped: 0, failed: [], failedMore: 0, bytes: 0, resumedParts: 0, resumedBytes: 0,
    listed: { files: 0, bytes: 0, complete: false }, interrupted: [], collisions: [],
  };
}

/** Failures kept with their error; more are counted only, so memory does not grow with a listing. */
export const MAX_FAILED_LISTED = 1000;

/** Files a failure in the summary (listed or counted) and reports it. */
export function fail(summary: Summary, o: TransferOptions, rel: string, size: number, error: string): void {
  if (summary.failed.length < MAX_FAILED_LISTED) summary.failed.push({ rel, error });
  else summary.failedMore++;
  o.onFile(rel, 'failed', size, error);
}

/** Runs `fn` on every item `next` gives, `width` at a time, until it gives undefined or `stop` aborts. */
export async function each<T>(next: () => T | undefined | Promise<T | undefined>, width: number, stop: AbortSignal, fn: (t: T) => Promise<void>): Promise<void> {
  const worker = async () => {
    for (;;) {
      if (stop.aborted) return;
      const t = await next();
      if (t === undefined || stop.aborted) return;
      await fn(t);
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
}

function fromArray<T>(items: readonly T[]): () => T | undefined {
  let i = 0;
  return () => items[i++];
}

/** The error of work left undone because of a stop signal. */
export function interrupted(): Error {
  return Object.assign(new Error('interrupted'), { name: 'AbortError' });
}

/** True for the error a stream or request throws when a signal cut it. */
export function isAbort(err: unknown): boolean {
  return (err as { name?: string }).name === 'AbortError';
}

/** Copies (or skips) one file and files the outcome in the summary. */
export async function settle(
  rel: string,
  size: number,
  o: TransferOptions,
  summary: Summary,
  work: () => Promise<'copied' | 'skipped'>,
  saved: () => string | undefined | Promise<string | undefined>,
): Promise<void> {
  try {
    const outcome = await work();
    if (outcome === 'copied') {
      summary.copied++;
      summary.bytes += size;
    } else summary.skipped++;
    o.onFile(rel, outcome, size);
  } catch (err) {
    if (o.stop.aborted && (isAbort(err) || o.cut.aborted)) {
      summary.interrupted.push({ rel, saved: (await saved()) ?? 'nothing' });
      o.onFile(rel, 'interrupted', size);
      return;
    }
    const error = err instanceof Error ? err.message : String(err);
    fail(summary, o, rel, size, error);
  }
}

/** Local directory → bucket prefix. */
export async function stageOut(root: string, store: Store, prefix: string, journal: Journal, o: TransferOptions): Promise<Summary> {
  const { files: local, unreadable } = await walk(root, o.followSourceSymlinks === true);
  const summary = newSummary();
  summary.listed = { files: local.length, bytes: local.reduce((n, l) => n + l.size, 0), complete: true };
  o.onListed(summary.listed.files, summary.listed.bytes, true);
  for (const u of unreadable) fail(summary, o, u.rel, 0, u.error);
  if (local.length === 0) return summary;
  // A signal during the destination listing ends the run at once: nothing has started yet.
  const listing = await store.list(prefix, o.maxObjects, o.stop).catch((err: unknown) => {
    if (o.stop.aborted) return undefined;
    throw err;
  });
  if (!listing) return summary;
  const remote = new Map(listing.map((e) => [e.rel, e]));
  const byRel = new Map(local.map((l) => [l.rel, l]));
  const same = async (a: Extract<Action, { kind: 'check' }>) => {
    const l = byRel.get(a.entry.rel)!;
    const h = await hashFile(l.path, l.size, true, o.stop);
    const there = await store.head(prefix + a.entry.rel, o.cut);
    if (!there) return false;
    return identical({ ...l, ...h }, { rel: l.rel, size: there.size, sha256: there.sha256, md5: there.md5 });
  };
  const saved = (rel: string) => {
    const n = Object.keys(journal.upload(rel)?.parts ?? {}).length;
    return n > 0 ? `${n} part${n === 1 ? '' : 's'}` : undefined;
  };
  await each(fromArray(plan(local, remote)), o.parallel, o.stop, (a) =>
    settle(a.entry.rel, a.entry.size, o, summary, async () => {
      if (a.kind === 'check' && (await same(a))) return 'skipped';
      await upload(byRel.get(a.entry.rel)!, store, prefix + a.entry.rel, journal, o, summary);
      return 'copied';
    }, () => saved(a.entry.rel)),
  );
  return summary;
}

async function upload(l: LocalEntry, store: Store, key: string, journal: Journal, o: TransferOptions, summary: Summary): Promise<void> {
  const single = l.size <= o.partSize;
  const { sha256 } = await hashFile(l.path, l.size, false, o.stop);
  if (o.stop.aborted) throw interrupted(); // a long hashing pass outlived a stop signal
  if (single) {
    const { etag, stored, md5 } = await store.put(key, l.path, l.size, sha256, o.onBytes, o.cut);
    // The MD5 is of the bytes read for sending, the SHA-256 of an earlier read: they describe the
    // same content only if the file did not change in between.
    await unchanged(l);
    // A single-part ETag is the MD5 of what the store received: verified without asking again.
    // Only an ETag that is no MD5 at all (KMS or SSE-C encryption) leaves the check to size below.
    if (stored === md5) return;
    if (stored !== undefined) throw new Error(`the file arrived altered at the store (ETag ${etag}, sent MD5 ${md5}); run again`);
  } else {
    await multipart(l, store, key, sha256, journal, o, summary);
  }
  const there = await store.head(key, o.cut);
  if (!there || there.size !== l.size || (there.sha256 !== undefined && there.sha256 !== sha256)) {
    throw new Error(`verification failed: the store holds ${there?.size ?? 'nothing'} bytes for ${l.size}`);
  }
}

/** Throws when a file changed (size or modification time) since it was listed and hashed. */
async function unchanged(l: LocalEntry): Promise<void> {
  const now = await stat(l.path);
  if (now.size !== l.size || now.mtimeMs !== l.mtimeMs) {
    throw new Error(CHANGED);
  }
}

async function multipart(
  l: LocalEntry,
  store: Store,
  key: string,
  sha256: string,
  journal: Journal,
  o: TransferOptions,
  summary: Summary,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    let st = journal.upload(l.rel);
    if (st && (st.size !== l.size || st.mtimeMs !== l.mtimeMs || st.partSize !== o.partSize || st.sha256 !== sha256)) {
      await store.abort(key, st.uploadId); // the file changed since: its parts are worthless
      st = undefined;
    }
    if (!st) {
      st = { uploadId: await store.createUpload(key, sha256, o.cut), size: l.size, mtimeMs: l.mtimeMs, sha256, partSize: o.partSize, parts: {} };
      await journal.setUpload(l.rel, st);
    }
    const state = st;
    const all = parts(l.size, o.partSize);
    const done = all.filter((p) => state.parts[p.n] !== undefined);
    summary.resumedParts += done.length;
    summary.resumedBytes += done.reduce((n, p) => n + p.end - p.start, 0);
    if (done.length > 0) o.onResume(l.rel, `${done.length} of ${all.length} parts already sent`, done.reduce((n, p) => n + p.end - p.start, 0));
    try {
      // After a stop signal no new part starts; the parts in flight finish (until the deadline).
      await each(fromArray(all.filter((p) => state.parts[p.n] === undefined)), o.partParallel, o.stop, async (p) => {
        const { etag, stored, md5 } = await store.uploadPart(key, state.uploadId, p.n, l.path, p, o.onBytes, o.cut);
        // A part's ETag is the MD5 of what the store received (where it is an MD5 at all).
        if (stored !== undefined && stored !== md5) throw new Error(`part ${p.n} arrived altered at the store (ETag ${etag}, sent MD5 ${md5})`);
        state.parts[p.n] = etag;
        await journal.setUpload(l.rel, state);
      });
      if (all.some((p) => state.parts[p.n] === undefined)) throw interrupted();
      await unchanged(l);
      await store.complete(key, state.uploadId, all.map((p) => ({ n: p.n, etag: state.parts[p.n]! })), o.cut);
      await journal.setUpload(l.rel, undefined);
      return;
    } catch (err) {
      // An upload the store forgot (aborted by a lifecycle rule, or by the mount's clean-up):
      // start it again once, from nothing.
      if (!isNoSuchUpload(err) || attempt > 0) throw err;
      await journal.setUpload(l.rel, undefined);
    }
  }
}

