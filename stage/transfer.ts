// The two directions of `estuary stage`. Each file is compared (plan.ts), then copied with
// bounded memory (files and parts stream from and to disk), verified, and only then made visible:
// an upload completes its multipart upload last, a download is renamed from its partial file last.
// The journal (local.ts) records every acknowledged part and every partial download, so a transfer
// killed at any point resumes where it stopped.

import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { hashFile, type Journal, type LocalEntry, PARTIAL_SUFFIX, walk } from './local.ts';
import { etagMd5, identical, parts, plan, type Action } from './plan.ts';
import { CHANGED, isNoSuchUpload, type RemoteEntry, type Store } from './s3.ts';

export interface TransferOptions {
  /** Files transferred at once. */
  readonly parallel: number;
  readonly partSize: number;
  /** Parts of one file uploaded at once. */
  readonly partParallel: number;
  readonly onBytes: (n: number) => void;
  readonly onFile: (rel: string, outcome: 'copied' | 'skipped' | 'failed', detail?: string) => void;
}

export interface Summary {
  copied: number;
  skipped: number;
  failed: { rel: string; error: string }[];
  bytes: number;
  resumedParts: number;
  resumedBytes: number;
}

async function each<T>(items: readonly T[], width: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}

function newSummary(): Summary {
  return { copied: 0, skipped: 0, failed: [], bytes: 0, resumedParts: 0, resumedBytes: 0 };
}

async function run(
  actions: readonly Action[],
  o: TransferOptions,
  summary: Summary,
  same: (a: Extract<Action, { kind: 'check' }>) => Promise<boolean>,
  copy: (a: Action) => Promise<void>,
): Promise<Summary> {
  await each(actions, o.parallel, async (a) => {
    try {
      if (a.kind === 'check' && (await same(a))) {
        summary.skipped++;
        o.onFile(a.entry.rel, 'skipped');
        return;
      }
      await copy(a);
      summary.copied++;
      summary.bytes += a.entry.size;
      o.onFile(a.entry.rel, 'copied');
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      summary.failed.push({ rel: a.entry.rel, error });
      o.onFile(a.entry.rel, 'failed', error);
    }
  });
  return summary;
}

/** Local directory → bucket prefix. */
export async function stageOut(root: string, store: Store, prefix: string, journal: Journal, o: TransferOptions): Promise<Summary> {
  const local = await walk(root);
  const remote = new Map((await store.list(prefix)).map((e) => [e.rel, e]));
  const summary = newSummary();
  const byRel = new Map(local.map((l) => [l.rel, l]));
  const same = async (a: Extract<Action, { kind: 'check' }>) => {
    const l = byRel.get(a.entry.rel)!;
    const h = await hashFile(l.path);
    const there = await store.head(prefix + a.entry.rel);
    if (!there) return false;
    return identical({ ...l, ...h }, { rel: l.rel, size: there.size, sha256: there.sha256, md5: etagMd5(there.etag) });
  };
  const copy = (a: Action) => upload(byRel.get(a.entry.rel)!, store, prefix + a.entry.rel, journal, o, summary);
  return run(plan(local, remote), o, summary, same, copy);
}

async function upload(l: LocalEntry, store: Store, key: string, journal: Journal, o: TransferOptions, summary: Summary): Promise<void> {
  const single = l.size <= o.partSize;
  const { sha256 } = await hashFile(l.path, false);
  if (single) {
    const { etag, md5 } = await store.put(key, l.path, l.size, sha256, o.onBytes);
    // The MD5 is of the bytes read for sending, the SHA-256 of an earlier read: they describe the
    // same content only if the file did not change in between.
    await unchanged(l);
    // A single-part ETag is the MD5 of what the store received: verified without asking again.
    // Only an ETag that is no MD5 at all (some encrypted stores) leaves the check to size below.
    const stored = etagMd5(etag);
    if (stored === md5) return;
    if (stored !== undefined) throw new Error(`the file arrived altered at the store (ETag ${etag}, sent MD5 ${md5}); run again`);
  } else {
    await multipart(l, store, key, sha256, journal, o, summary);
  }
  const there = await store.head(key);
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
      st = { uploadId: await store.createUpload(key, sha256), size: l.size, mtimeMs: l.mtimeMs, sha256, partSize: o.partSize, parts: {} };
      await journal.setUpload(l.rel, st);
    }
    const state = st;
    const all = parts(l.size, o.partSize);
    const done = all.filter((p) => state.parts[p.n] !== undefined);
    summary.resumedParts += done.length;
    summary.resumedBytes += done.reduce((n, p) => n + p.end - p.start, 0);
    try {
      await each(all.filter((p) => state.parts[p.n] === undefined), o.partParallel, async (p) => {
        const { etag, md5 } = await store.uploadPart(key, state.uploadId, p.n, l.path, p, o.onBytes);
        // A part's ETag is the MD5 of what the store received (where it is an MD5 at all).
        const stored = etagMd5(etag);
        if (stored !== undefined && stored !== md5) throw new Error(`part ${p.n} arrived altered at the store (ETag ${etag}, sent MD5 ${md5})`);
        state.parts[p.n] = etag;
        await journal.setUpload(l.rel, state);
      });
      await unchanged(l);
      await store.complete(key, state.uploadId, all.map((p) => ({ n: p.n, etag: state.parts[p.n]! })));
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

/** Inside `root` only: a key like `../../etc/x` must not write outside the destination. */
function localPath(root: string, rel: string): string | undefined {
  const p = resolve(root, ...rel.split('/'));
  return p.startsWith(resolve(root) + sep) ? p : undefined;
}

/** Bucket prefix → local directory. */
export async function stageIn(store: Store, prefix: string, root: string, journal: Journal, o: TransferOptions): Promise<Summary> {
  const remote = await store.list(prefix);
  await mkdir(root, { recursive: true });
  const local = new Map((await walk(root)).map((e) => [e.rel, e]));
  const byRel = new Map(remote.map((r) => [r.rel, r]));
  const summary = newSummary();
  const same = async (a: Extract<Action, { kind: 'check' }>) => {
    const l = local.get(a.entry.rel)!;
    const there = await store.head(prefix + a.entry.rel);
    if (!there) return false;
    const h = await hashFile(l.path);
    return identical({ rel: l.rel, size: there.size, sha256: there.sha256, md5: etagMd5(there.etag) }, { ...l, ...h });
  };
  const copy = (a: Action) => download(byRel.get(a.entry.rel)!, store, root, journal, summary, o);
  return run(plan(remote, local), o, summary, same, copy);
}

async function download(r: RemoteEntry, store: Store, root: string, journal: Journal, summary: Summary, o: TransferOptions): Promise<void> {
  const dest = localPath(root, r.rel);
  if (!dest) throw new Error(`key ${r.key} would land outside ${root}; not written`);
  const partial = `${dest}${PARTIAL_SUFFIX}`;
  await mkdir(dirname(dest), { recursive: true });
  // Resume a partial file only if the object is still the one it was started from (If-Match).
  const st = journal.download(r.rel);
  let from = st ? await stat(partial).then((s) => s.size, () => 0) : 0;
  // A partial file as long as the object (killed between the last byte and the rename): the
  // range would be empty, so fetch it again whole rather than trust bytes never verified.
  if (st && from >= st.size) from = 0;
  let got = from > 0 ? await store.read(r.key, from, st!.etag) : undefined;
  if (!got) {
    from = 0;
    await rm(partial, { force: true });
    got = await store.read(r.key, 0);
    if (!got) throw new Error('the object vanished from the store');
  }
  summary.resumedBytes += from;
  // Only files worth resuming are journalled: a small one is cheaper to fetch again.
  const journalled = got.size > o.partSize;
  if (journalled) await journal.setDownload(r.rel, { etag: got.etag, size: got.size });
  const sha = createHash('sha256');
  // MD5 costs three times the CPU of SHA-256 (with SHA extensions): only when nothing else checks.
  const md5 = got.sha256 ? undefined : createHash('md5');
  if (from > 0) {
    for await (const c of createReadStream(partial, { end: from - 1 })) {
      sha.update(c as Buffer);
      md5?.update(c as Buffer);
    }
  }
  const hashing = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      sha.update(chunk);
      md5?.update(chunk);
      o.onBytes(chunk.length);
      cb(null, chunk);
    },
  });
  await pipeline(got.body, hashing, createWriteStream(partial, { flags: from > 0 ? 'r+' : 'w', start: from }));
  const size = (await stat(partial)).size;
  const gotSha = sha.digest('hex');
  const gotMd5 = md5?.digest('hex');
  const wantMd5 = etagMd5(got.etag);
  if (size !== got.size) throw new Error(`got ${size} of ${got.size} bytes; run again to resume`);
  if ((got.sha256 && got.sha256 !== gotSha) || (!got.sha256 && wantMd5 && wantMd5 !== gotMd5)) {
    await rm(partial, { force: true });
    if (journalled) await journal.setDownload(r.rel, undefined);
    throw new Error('content does not match the checksum the store holds; the partial file was removed');
  }
  const fh = await open(partial, 'r');
  await fh.sync();
  await fh.close();
  await rename(partial, dest);
  if (journalled) await journal.setDownload(r.rel, undefined);
}
