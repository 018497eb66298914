// A local copy of a file for the writes a stream cannot carry: random writes, appends, truncates
// to a non-zero size, and reads of what the same handle wrote. The object is downloaded into a
// file under the cache directory (up to a configured size, EFBIG beyond), changed in place, and
// uploaded whole at flush — by a single PUT or a multipart upload read back from the file.
// A full cache disk surfaces as ENOSPC from write().
//
// The directory is this process's own (leftovers.ts). A mount runs for weeks, and an age-based tmp
// cleaner may remove the directory while it is empty; it is then made again at the next change.
// Files are made with O_EXCL and O_NOFOLLOW: a name already there, or a symlink planted at one, is
// never opened.

import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ObjectClient, WriteOptions } from '../s3/object-client.ts';
import { type BufferPool, sizeClass } from './buffer-pool.ts';
import { FsError } from './errno.ts';
import { partRanges, SINGLE_PUT_LIMIT } from './part-sizes.ts';
import { abortUpload, type LateAborts } from './late-aborts.ts';

export interface StagingSettings {
  readonly client: ObjectClient;
  /** Buffers for parts, and the memory budget they are drawn on. */
  readonly pool: BufferPool;
  readonly dir: string;
  /** Largest object that may be copied to local disk for a change. */
  readonly limit: number;
  readonly firstPartSize: number;
  readonly maxInFlight: number;
  /** Where an abort that failed is tried again (without it, once only). */
  readonly lateAborts?: LateAborts;
  /**
   * With --write-back, the newest content of a key may be in the local journal rather than in
   * the bucket, so a change starts from it instead of the stale object. `hasLocal` says whether
   * there is such content now; `copyLocal` copies it to `dest` and answers its size, or answers
   * undefined when there is none any more (its upload finished: the bucket has it).
   */
  readonly hasLocal?: (key: string) => boolean;
  readonly copyLocal?: (key: string, dest: string) => Promise<number | undefined>;
  /** Told once per stream when the cache disk could not take its local copy (spool.ts). */
  readonly copyDropped?: (key: string, err: unknown) => void;
}

/** Runs `fn` over `items` with at most `limit` running at once. */
export async function inParallel<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

const STAGING_FILE = /^staging-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Whether `name` is one StagingFile gives its files (leftovers.ts removes only those). */
export function isStagingFileName(name: string): boolean {
  return STAGING_FILE.test(name);
}

const NEW_FILE = constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * What direct I/O asks of a write's offset, length and memory address: the device's logical block
 * size, 512 bytes or 4 KiB; 4 KiB satisfies both.
 */
const DIRECT_ALIGN = 4096;

/** How many leading bytes of `data` direct I/O could write at `offset` (whole blocks only). */
const alignedHead = (data: Buffer, offset: number) =>
  offset % DIRECT_ALIGN === 0 ? data.length - (data.length % DIRECT_ALIGN) : 0;

/** Writes all of `data` at `offset`. */
async function writeAll(fh: FileHandle, data: Buffer, offset: number): Promise<void> {
  let at = 0;
  while (at < data.length) {
    const { bytesWritten } = await fh.write(data, at, data.length - at, offset + at);
    at += bytesWritten;
  }
}

const mine = (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EEXIST') throw err;
};

/** Refuses `dir` unless it is a directory (not a symlink) of this user's. */
async function ownDir(dir: string): Promise<void> {
  const st = await lstat(dir);
  if (!st.isDirectory() || st.uid !== (process.getuid?.() ?? st.uid)) {
    throw new FsError('EIO', `staging directory ${dir} was replaced by something not this user's`);
  }
}

/**
 * Makes the staging directory `dir` again after a cleaner removed it, and the cache directory
 * above it if that went too (a cleaner emptying /tmp): one that reappeared as someone else's, or
 * as a symlink, is refused.
 */
async function remakeDir(dir: string): Promise<void> {
  const parentGone = await mkdir(dir, { mode: 0o700 }).then(
    () => false,
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return true;
      mine(err);
      return false;
    },
  );
  if (parentGone) {
    await mkdir(dirname(dir), { mode: 0o700 }).catch(mine);
    await ownDir(dirname(dir));
    await mkdir(dir, { mode: 0o700 }).catch(mine);
  }
  await ownDir(dir);
}

/**
 * `make(path)` on a new staging file's path in `dir`, once `dir` is found to be this user's own
 * directory (made again if gone). Checked each time: in a --cache-dir others may write to, a name
 * a cleaner freed could have been taken by a symlink of theirs.
 */
async function inStagingDir<T>(dir: string, make: (path: string) => Promise<T>): Promise<T> {
  await ownDir(dir).catch(async (err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
    await remakeDir(dir);
  });
  return make(join(dir, `staging-${randomUUID()}`));
}

export class StagingFile {
  private readonly s: StagingSettings;
  private readonly path: string;
  private readonly fh: FileHandle;
  /** A second handle on the file, opened with O_DIRECT, once writeThrough() asked for one. */
  private direct: Promise<FileHandle | undefined> | undefined;
  /** Set once the file has been handed to the journal: close() must not delete it then. */
  private handedOver = false;
  size: number;

  private constructor(s: StagingSettings, path: string, fh: FileHandle, size: number) {
    this.s = s;
    this.path = path;
    this.fh = fh;
    this.size = size;
  }

  static async create(s: StagingSettings, initial: Buffer = Buffer.alloc(0)): Promise<StagingFile> {
    const file = await inStagingDir(s.dir, async (path) => new StagingFile(s, path, await open(path, NEW_FILE, 0o600), 0));
    try {
      if (initial.length > 0) await file.write(initial, 0);
    } catch (err) {
      await file.close();
      throw err;
    }
    return file;
  }

  /** Downloads `key` (of `size` bytes; of ETag `etag` when given, else it fails `changed`) into a new staging file. */
  static async fromObject(s: StagingSettings, key: string, size: number, etag?: string): Promise<StagingFile> {
    const copyLocal = s.copyLocal;
    if (copyLocal) {
      const local = await inStagingDir(s.dir, async (path) => ({ path, size: await copyLocal(key, path) }));
      if (local.size !== undefined) {
        const fh = await open(local.path, constants.O_RDWR | constants.O_NOFOLLOW);
        return new StagingFile(s, local.path, fh, local.size);
      }
    }
    if (size > s.limit) {
      throw new FsError(
        'EFBIG',
        `${key} is ${size} bytes, over the staging limit of ${s.limit} for random writes`,
      );
    }
    const file = await StagingFile.create(s);
    try {
      await inParallel(partRanges(size, s.firstPartSize), s.maxInFlight, async (range) => {
        await s.pool.budget.acquire(range.end - range.start);
        try {
          const data = await s.client.get(key, etag === undefined ? range : { ...range, ifMatch: etag });
          await file.write(data, range.start);
        } finally {
          s.pool.budget.release(range.end - range.start);
        }
      });
      file.size = size;
    } catch (err) {
      await file.close();
      throw err;
    }
    return file;
  }

  async read(offset: number, length: number): Promise<Buffer> {
    const n = Math.max(0, Math.min(length, this.size - offset));
    const buf = Buffer.allocUnsafe(n);
    if (n === 0) return buf;
    const { bytesRead } = await this.fh.read(buf, 0, n, offset);
    return buf.subarray(0, bytesRead);
  }

  async write(data: Buffer, offset: number): Promise<void> {
    await writeAll(this.fh, data, offset);
    this.size = Math.max(this.size, offset + data.length);
  }

  /**
   * As write(), but past the page cache (O_DIRECT) when the kernel takes it: a whole part from a
   * page-aligned buffer (aligned-buffer.ts) on a file system with direct I/O. Writing through the
   * page cache into new blocks costs ext4 1.5 s of system CPU per GB, direct I/O 0.04 s. The rest
   * (the last block of a file's last part, a plain buffer, a file system without direct I/O) goes
   * through the page cache; a refusal stops the tries for this file, and a write that meets the
   * handle closing goes through the page cache too. The two handles write disjoint ranges, and
   * the kernel drops cached pages of a range written directly, so reads see every byte.
   */
  async writeThrough(data: Buffer, offset: number): Promise<void> {
    const head = alignedHead(data, offset);
    const direct = head > 0 ? await this.directHandle() : undefined;
    if (direct) {
      try {
        await writeAll(direct, data.subarray(0, head), offset);
        if (head < data.length) await writeAll(this.fh, data.subarray(head), offset + head);
        this.size = Math.max(this.size, offset + data.length);
        return;
      } catch {
        // EINVAL for memory or a file system direct I/O cannot serve; anything else (a full disk)
        // comes back from the write through the page cache, which says it as well.
        await this.closeDirect();
      }
    }
    await this.write(data, offset);
  }

  /** The O_DIRECT handle, opened through /proc on this very file (no path to race for). */
  private directHandle(): Promise<FileHandle | undefined> {
    this.direct ??= open(`/proc/self/fd/${this.fh.fd}`, constants.O_WRONLY | constants.O_DIRECT).catch(
      () => undefined,
    );
    return this.direct;
  }

  private async closeDirect(): Promise<void> {
    const direct = this.direct;
    this.direct = Promise.resolve(undefined);
    await (await direct)?.close().catch(() => undefined);
  }

  async truncate(size: number): Promise<void> {
    await this.fh.truncate(size);
    this.size = size;
  }

  /** Uploads the whole file as `key`; returns the ETag. */
  upload(key: string, options: WriteOptions): Promise<string> {
    return uploadFile(this.s, this.fh, this.size, key, options);
  }

  /** Makes the content durable on disk and moves the file to `target`; the handle lets go of it. */
  async handOver(target: string): Promise<void> {
    await this.closeDirect();
    await this.fh.sync();
    await rename(this.path, target);
    this.handedOver = true;
    await this.fh.close();
  }

  async close(): Promise<void> {
    if (this.handedOver) return;
    await this.closeDirect();
    await this.fh.close().catch(() => undefined);
    await unlink(this.path).catch(() => undefined);
  }
}

/** Bytes [offset, offset + length) of the file, read into the start of `into`. */
async function readAt(fh: FileHandle, offset: number, length: number, into: Buffer): Promise<Buffer> {
  const buf = into.subarray(0, length);
  let at = 0;
  while (at < length) {
    const { bytesRead } = await fh.read(buf, at, length - at, offset + at);
    if (bytesRead === 0) throw new FsError('EIO', 'local file shorter than expected');
    at += bytesRead;
  }
  return buf;
}

/** What uploadFile needs of the staging settings. */
export type UploadFileSettings = Pick<StagingSettings, 'client' | 'pool' | 'firstPartSize' | 'maxInFlight' | 'lateAborts'>;

/** Uploads `size` bytes of an open local file as `key`: one PUT, or parallel parts. */
export async function uploadFile(
  s: UploadFileSettings,
  fh: FileHandle,
  size: number,
  key: string,
  options: WriteOptions,
): Promise<string> {
  const { client, pool } = s;
  const ranges = partRanges(size, s.firstPartSize);
  /** Runs `send` on bytes [start, end) of the file, read into a pooled buffer (buffer-pool.ts). */
  const withBytes = async <T>(start: number, end: number, send: (body: Buffer) => Promise<T>): Promise<T> => {
    const buf = (await pool.take(sizeClass(end - start)))!;
    try {
      return await send(await readAt(fh, start, end - start, buf));
    } finally {
      pool.give(buf);
    }
  };
  if (ranges.length <= 1 || size <= SINGLE_PUT_LIMIT) {
    return withBytes(0, size, async (body) => (await client.put(key, body, options)).etag);
  }
  const id = await client.createMultipart(key, options);
  const parts: { partNumber: number; etag: string }[] = [];
  try {
    await inParallel(
      ranges.map((r, i) => ({ ...r, partNumber: i + 1 })),
      s.maxInFlight,
      async (r) => {
        const etag = await withBytes(r.start, r.end, (body) => client.uploadPart(key, id, r.partNumber, body));
        parts.push({ partNumber: r.partNumber, etag });
      },
    );
    parts.sort((a, b) => a.partNumber - b.partNumber);
    return (await client.completeMultipart(key, id, parts)).etag;
  } catch (err) {
    // The upload's own error is what the writer hears, whatever the abort does.
    await abortUpload(s, key, id);
    throw err;
  }
}
