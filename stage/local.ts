// The local side of a transfer: walking a directory, hashing files, and the journal that lets an
// interrupted transfer resume without sending finished parts again.

import { createHash, randomBytes } from 'node:crypto';
import { lstat, mkdir, open, readdir, readFile, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { PARTIAL_SUFFIX } from './keys.ts';
import type { Entry } from './plan.ts';

/** Read size of the hashing pass: large enough that a read costs little beside hashing it. */
const HASH_BUFFER = 256 * 1024;

export interface LocalEntry extends Entry {
  readonly path: string;
  readonly mtimeMs: number;
}

/** An entry of the source that cannot be uploaded, and why: listed as failed, the others go on. */
export interface Unreadable {
  readonly rel: string;
  readonly error: string;
}

/**
 * Files under `root`. A symlink is followed while it leads to a file or directory inside the
 * source; one that leads outside it is not followed (listed as unreadable) unless `followOut`, as
 * rclone copies no link without -L: a link planted in a shared results directory must not make
 * whoever stages it out publish what it points to. A directory already on the way down (`loop ->
 * ..`) is not entered again. An entry that cannot be read (a dangling link, a name that is not
 * UTF-8, a directory without permission, a name ending in .estuary-partial, which `stage in`
 * could never write back) is listed in `unreadable`; the walk goes on.
 */
export async function walk(root: string, followOut = false): Promise<{ files: LocalEntry[]; unreadable: Unreadable[] }> {
  const files: LocalEntry[] = [];
  const unreadable: Unreadable[] = [];
  const realRoot = await realpath(root);
  const inside = (p: string) => p === realRoot || p.startsWith(realRoot + sep);
  const visit = async (dir: string, relDir: string, above: ReadonlySet<string>): Promise<void> => {
    let names: Buffer[];
    try {
      names = await readdir(dir, { encoding: 'buffer' });
    } catch (err) {
      unreadable.push({ rel: relDir || '.', error: `cannot read the directory (${(err as NodeJS.ErrnoException).code ?? String(err)})` });
      return;
    }
    for (const raw of names) {
      const name = raw.toString('utf8');
      const rel = relDir ? `${relDir}/${name}` : name;
      const why = await entry(join(dir, name), rel, raw, name, relDir === '', above);
      if (why) unreadable.push({ rel, error: why });
    }
  };
  const entry = async (path: string, rel: string, raw: Buffer, name: string, top: boolean, above: ReadonlySet<string>): Promise<string | undefined> => {
    if (!Buffer.from(name, 'utf8').equals(raw)) return 'its name is not UTF-8, which an S3 key must be; rename it';
    if (name.endsWith(PARTIAL_SUFFIX)) return `a name ending in ${PARTIAL_SUFFIX} is stage's own partial file, which stage in would not write back; rename it`;
    const st = await stat(path).catch((err: NodeJS.ErrnoException) => err);
    if (st instanceof Error) return `cannot read it (${st.code ?? st.message}${st.code === 'ENOENT' ? ': a symlink to nothing' : ''})`;
    if (!followOut && (await lstat(path)).isSymbolicLink()) {
      const target = await realpath(path).catch(() => undefined);
      if (target === undefined || !inside(target)) return 'a symlink that leads outside the source; not followed (--follow-source-symlinks follows it)';
    }
    const id = `${st.dev}:${st.ino}`;
    if (st.isDirectory() && !above.has(id)) await visit(path, rel, new Set([...above, id]));
    else if (st.isFile()) files.push({ path, rel, size: st.size, mtimeMs: st.mtimeMs });
    return undefined;
  };
  const top = await stat(root);
  await visit(root, '', new Set([`${top.dev}:${top.ino}`]));
  files.sort((a, b) => (a.rel < b.rel ? -1 : 1));
  return { files, unreadable };
}

/**
 * SHA-256 (recorded on every object) and, when asked, MD5 (what a single-part ETag is): a large
 * file, uploaded in parts, never needs its MD5, and skipping it halves the CPU of that pass.
 */
export async function hashFile(path: string, size: number, withMd5 = true, signal?: AbortSignal): Promise<{ sha256: string; md5?: string }> {
  const sha = createHash('sha256');
  const md5 = withMd5 ? createHash('md5') : undefined;
  // One buffer read into again and again: a stream would allocate a new one per read, and eight
  // files hashed at once leave tens of MB of them for the garbage collector.
  const buf = Buffer.allocUnsafe(HASH_BUFFER);
  const fh = await open(path, 'r');
  try {
    // Exactly the listed bytes, which are the bytes sent: a file that reads as more than its size
    // (procfs, or one written to meanwhile) must not get a hash of bytes the store never receives.
    for (let left = size; left > 0; ) {
      // A pass over a large file takes seconds to minutes: a stop signal ends it between reads.
      if (signal?.aborted) throw Object.assign(new Error('interrupted'), { name: 'AbortError' });
      const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, left), null);
      left -= bytesRead;
      if (bytesRead === 0) break;
      const c = buf.subarray(0, bytesRead);
      sha.update(c);
      md5?.update(c);
    }
  } finally {
    await fh.close();
  }
  return { sha256: sha.digest('hex'), md5: md5?.digest('hex') };
}

export interface UploadState {
  readonly uploadId: string;
  readonly size: number;
  readonly mtimeMs: number;
  readonly sha256: string;
  readonly partSize: number;
  /** Part number → ETag, for every part the store acknowledged. */
  readonly parts: Record<string, string>;
}

export interface DownloadState {
  readonly etag: string;
  readonly size: number;
}

interface JournalData {
  uploads: Record<string, UploadState>;
  downloads: Record<string, DownloadState>;
}

/**
 * One JSON file per transfer (named by a hash of source and destination), rewritten atomically
 * (temporary file + rename) after every acknowledged part, so a kill -9 at any moment leaves the
 * last complete state.
 */
export class Journal {
  readonly path: string;
  #data: JournalData = { uploads: {}, downloads: {} };
  #writing: Promise<void> = Promise.resolve();

  constructor(stateDir: string, source: string, destination: string) {
    const id = createHash('sha256').update(`${source}\n${destination}`).digest('hex').slice(0, 24);
    this.path = join(stateDir, `${id}.json`);
  }

  async load(): Promise<void> {
    try {
      const d = JSON.parse(await readFile(this.path, 'utf8')) as Partial<JournalData>;
      this.#data = { uploads: d.uploads ?? {}, downloads: d.downloads ?? {} };
    } catch {
      this.#data = { uploads: {}, downloads: {} };
    }
  }

  upload(rel: string): UploadState | undefined {
    return this.#data.uploads[rel];
  }

  download(rel: string): DownloadState | undefined {
    return this.#data.downloads[rel];
  }

  setUpload(rel: string, s: UploadState | undefined): Promise<void> {
    if (s) this.#data.uploads[rel] = s;
    else delete this.#data.uploads[rel];
    return this.#save();
  }

  setDownload(rel: string, s: DownloadState | undefined): Promise<void> {
    if (s) this.#data.downloads[rel] = s;
    else delete this.#data.downloads[rel];
    return this.#save();
  }

  get pending(): number {
    return Object.keys(this.#data.uploads).length + Object.keys(this.#data.downloads).length;
  }

  #save(): Promise<void> {
    const text = JSON.stringify(this.#data);
    // Writes stay in order, but each stands alone: one that failed (the disk full for a moment)
    // fails only its own caller, and the next write, with the whole state, repairs it.
    const write = this.#writing.catch(() => undefined).then(async () => {
      await mkdir(join(this.path, '..'), { recursive: true });
      const tmp = `${this.path}.${randomBytes(4).toString('hex')}`;
      try {
        await writeFile(tmp, text);
        await rename(tmp, this.path);
      } catch (err) {
        await rm(tmp, { force: true });
        throw err;
      }
    });
    this.#writing = write;
    return write;
  }
}
