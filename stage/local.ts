// The local side of a transfer: walking a directory, hashing files, and the journal that lets an
// interrupted transfer resume without sending finished parts again.

import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { PARTIAL_SUFFIX } from './keys.ts';
import type { Entry } from './plan.ts';

/** Read size of the hashing pass: large enough that a read costs little beside hashing it. */
const HASH_BUFFER = 256 * 1024;

export interface LocalEntry extends Entry {
  readonly path: string;
  readonly mtimeMs: number;
}

/**
 * Files under `root` (symlinks are followed to files and directories; a directory already on the
 * way down, such as `loop -> ..`, is not entered again, which would recurse without end).
 */
export async function walk(root: string): Promise<LocalEntry[]> {
  const out: LocalEntry[] = [];
  const visit = async (dir: string, above: ReadonlySet<string>): Promise<void> => {
    for (const d of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, d.name);
      if (d.name.endsWith(PARTIAL_SUFFIX)) continue;
      const st = await stat(path);
      const id = `${st.dev}:${st.ino}`;
      if (st.isDirectory() && !above.has(id)) await visit(path, new Set([...above, id]));
      else if (st.isFile()) out.push({ path, rel: relative(root, path).split(sep).join('/'), size: st.size, mtimeMs: st.mtimeMs });
    }
  };
  const top = await stat(root);
  await visit(root, new Set([`${top.dev}:${top.ino}`]));
  return out.sort((a, b) => (a.rel < b.rel ? -1 : 1));
}

/**
 * SHA-256 (recorded on every object) and, when asked, MD5 (what a single-part ETag is): a large
 * file, uploaded in parts, never needs its MD5, and skipping it halves the CPU of that pass.
 */
export async function hashFile(path: string, withMd5 = true): Promise<{ sha256: string; md5?: string }> {
  const sha = createHash('sha256');
  const md5 = withMd5 ? createHash('md5') : undefined;
  // One buffer read into again and again: a stream would allocate a new one per read, and eight
  // files hashed at once leave tens of MB of them for the garbage collector.
  const buf = Buffer.allocUnsafe(HASH_BUFFER);
  const fh = await open(path, 'r');
  try {
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
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
    this.#writing = this.#writing.then(async () => {
      await mkdir(join(this.path, '..'), { recursive: true });
      const tmp = `${this.path}.${randomBytes(4).toString('hex')}`;
      await writeFile(tmp, text);
      await rename(tmp, this.path);
    });
    return this.#writing;
  }
}
