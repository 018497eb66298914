// The FUSE glue: the only file that imports fuse-native. Each operation is a few lines that call
// the Filesystem and reply; errors become errno numbers here, through toErrno(), and nowhere
// else. fuse-native's per-operation timeout (15 s by default, answering ETIMEDOUT) is off: close
// waits for uploads that may take minutes, and the S3 client has its own retries and timeouts.

import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type { Filesystem, Owner } from './fs/filesystem.ts';
import { type ErrnoName, toErrno } from './fs/errno.ts';
import { joinPath, parentOf } from './fs/keys.ts';
import { type Attr, S_IFDIR, stMode } from './fs/metadata.ts';
import { fsErrors } from './errors.ts';
import { callerHideFor } from './caller-syscall.ts';
import { mountDeviceAt, watchExternalUnmount } from './mount-table.ts';

type Cb = (code: number, ...result: unknown[]) => void;

interface FuseInstance {
  mount(cb: (err: Error | null) => void): void;
  unmount(cb: (err: Error | null) => void): void;
}

interface FuseClass {
  new (mnt: string, ops: Record<string, unknown>, opts: Record<string, unknown>): FuseInstance;
  unmount(mnt: string, cb: (err: Error | null) => void): void;
  [errno: string]: unknown;
}

const require = createRequire(import.meta.url);
let loaded: FuseClass | undefined;

/**
 * fuse-native, loaded on first use so that `estuary mount --help` and the other roles work on
 * machines without libfuse; a missing libfuse 2 becomes one line that says what to install.
 */
/** Fails with ESTUARY_FS_NO_LIBFUSE, before anything else is started, when libfuse 2 is missing. */
export function requireLibfuse(): void {
  fuseNative();
}

function fuseNative(): FuseClass {
  if (loaded) return loaded;
  try {
    loaded = require('fuse-native') as FuseClass;
  } catch (err) {
    if (/libfuse\.so/.test(String((err as Error)?.message))) throw fsErrors.noLibfuse();
    throw err;
  }
  return loaded;
}

interface Binding {
  fuse_native_unmount(mnt: string, thread: Buffer): void;
  /** Added by scripts/patch-fuse-native.sh: [uid, gid] of the operation being dispatched. */
  fuse_native_caller?: () => [number, number];
  /**
   * Added by scripts/patch-fuse-native.sh: called before mounting, utimens is called also when
   * one time is omitted (`touch -m`, `touch -a`), with UTIME_OMIT as OMITTED_MS.
   */
  fuse_native_utime_omit_ok?: () => void;
  /**
   * Added by scripts/patch-fuse-native.sh: called before mounting, operations on an open file that
   * libfuse has no path for reach JavaScript with the path "" instead of being refused (ENOENT).
   */
  fuse_native_nullpath_ok?: () => void;
  /**
   * Added by scripts/patch-fuse-native.sh: whether the rename being dispatched is libfuse hiding a
   * file removed while open (renaming it to .fuse_hidden<N>), not a user's rename; valid during
   * the synchronous call of the rename's JavaScript handler.
   */
  fuse_native_hiding?: () => boolean;
  /**
   * Added by scripts/patch-fuse-native.sh: the kernel's id of the request the rename being
   * dispatched belongs to (a rename over an open file is libfuse's hide and the rename, in one).
   */
  fuse_native_request?: () => number;
  /** Added by scripts/patch-fuse-native.sh: the pid of the process behind the operation being dispatched. */
  fuse_native_caller_pid?: () => number;
  /** Added by scripts/patch-fuse-native.sh: true once the FUSE thread's loop has ended. */
  fuse_native_session_ended?: () => boolean;
}

let addon: Binding | undefined;

/**
 * fuse-native's compiled addon, found once: node-gyp-build lists directories to find it, which
 * fails when the process is out of file descriptors (and cost a listing per create).
 */
function binding(): Binding {
  if (addon) return addon;
  const main = require.resolve('fuse-native');
  const load = createRequire(main)('node-gyp-build') as (d: string) => Binding;
  addon = load(dirname(main));
  return addon;
}

/**
 * Who called the operation now being dispatched; read synchronously at the start of the handler,
 * while the addon still holds that operation's caller. Undefined when the addon was not rebuilt
 * with scripts/patch-fuse-native.sh: new names then belong to the mounting user.
 */
function caller(): Owner | undefined {
  const ids = binding().fuse_native_caller?.();
  return ids && { uid: ids[0], gid: ids[1] };
}

/** True when the addon can tell who called; the mount warns at start when it cannot. */
export function knowsCallers(): boolean {
  return typeof binding().fuse_native_caller === 'function';
}

/** True when the addon passes utimens with one time omitted (`touch -m`); see above. */
export function knowsOmittedTimes(): boolean {
  return typeof binding().fuse_native_utime_omit_ok === 'function';
}

/** True when the addon tells libfuse's renames of removed open files from a user's; see above. */
export function knowsHides(): boolean {
  return typeof binding().fuse_native_hiding === 'function';
}

export interface MountOptions {
  /** Shown in /proc/mounts as the source, e.g. estuary#bucket/prefix. */
  readonly source: string;
  readonly allowOther: boolean;
  /** Mount over a directory that holds files (libfuse 2 refuses that otherwise). */
  readonly nonEmpty?: boolean;
  readonly debug?: boolean;
}

export interface OpLogger {
  trace(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

function errnoNumber(name: ErrnoName): number {
  const Fuse = fuseNative();
  const n = Fuse[name];
  return typeof n === 'number' ? n : (Fuse.EIO as number);
}

function toStat(attr: Attr, ino: number): Record<string, unknown> {
  const t = new Date(attr.mtimeMs);
  return {
    ctime: new Date(attr.ctimeMs ?? attr.mtimeMs),
    ino,
    mode: stMode(attr),
    uid: attr.uid,
    gid: attr.gid,
    size: attr.size,
    nlink: attr.kind === 'dir' ? 2 : 1,
    blksize: 4096,
    blocks: Math.ceil(attr.size / 512),
    mtime: t,
    atime: t,
  };
}

/** The attributes readdir gives `.` and `..`: a directory, and its number. */
const dot = (ino: number) => ({ mode: S_IFDIR, ino });

/** Counts operations between the kernel's call and our answer, so shutdown can wait for them. */
export class InFlight {
  count = 0;
}

/** What the patched addon passes for UTIME_OMIT: 2^64 - 1 ms, as a double. */
const OMITTED_MS = 2 ** 53;

/** A time utimens was given, or undefined when the caller left it as it is (UTIME_OMIT). */
const given = (ms: number): number | undefined => (ms >= OMITTED_MS ? undefined : ms);

/**
 * The path the patched addon passes for an open file or directory libfuse has no path for: a
 * removed file still open (.fuse_hidden) whose directory was removed too. Operations with a
 * descriptor find the file by that; a change of its mode, owner or times has nothing to change.
 */
const NO_PATH = '';

/** For operations that answer with nothing but success. */
const nothing = (p: Promise<void>): Promise<unknown[]> => p.then(() => []);

/** A change of mode, owner or times: for a file libfuse has no path for (NO_PATH), nothing to change. */
const change = (p: string, work: () => Promise<void>): Promise<unknown[]> =>
  p === NO_PATH ? Promise.resolve([]) : nothing(work());

/** Builds the operation table: every op runs `work` and answers with its result or an errno. */
export function operations(fs: Filesystem, log: OpLogger, inFlight: InFlight): Record<string, unknown> {
  const stat = (path: string, attr: Attr) => toStat(attr, fs.inodeOf(path, attr.kind));
  const reply = (op: string, path: string, cb: Cb, work: () => Promise<unknown[] | number>) => {
    inFlight.count++;
    log.trace({ op, path }, 'operation');
    // A synchronous throw, too, is answered as an errno: escaping to the addon, it would end the
    // process with every open file.
    let running: Promise<unknown[] | number>;
    try {
      running = work();
    } catch (err) {
      running = Promise.reject(err);
    }
    running
      .finally(() => {
        inFlight.count--;
      })
      .then(
        (result) => (typeof result === 'number' ? cb(result) : cb(0, ...result)),
        (err: unknown) => {
          const name = toErrno(err);
          if (name === 'EIO') log.warn({ op, path, err: String(err) }, 'operation failed with EIO');
          else log.debug({ op, path, errno: name }, 'operation refused');
          cb(errnoNumber(name));
        },
      );
  };
  return {
    getattr: (p: string, cb: Cb) => reply('getattr', p, cb, async () => [stat(p, await fs.getattr(p))]),
    fgetattr: (p: string, fd: number, cb: Cb) =>
      reply('fgetattr', p, cb, async () => {
        if (p !== NO_PATH) return [stat(p, await fs.getattr(p))];
        const opened = fs.openedAttr(fd);
        return [toStat(opened.attr, fs.inodeOf(opened.path, opened.attr.kind))];
      }),
    // Each name goes with its attributes, so the kernel gets every entry's type (d_type) and `find`
    // or `du` need not stat the files they only pass through. Of `.` and `..` only the type is read.
    readdir: (p: string, cb: Cb) =>
      reply('readdir', p, cb, async () => {
        // A directory removed while a listing of it was open holds nothing.
        const entries = p === NO_PATH ? [] : await fs.readdir(p);
        return [
          ['.', '..', ...entries.map((e) => e.name)],
          [
            dot(fs.inodeOf(p, 'dir')),
            dot(fs.inodeOf(parentOf(p), 'dir')),
            ...entries.map((e) => stat(joinPath(p, e.name), e.attr)),
          ],
        ];
      }),
    open: (p: string, flags: number, cb: Cb) => reply('open', p, cb, async () => [await fs.open(p, flags)]),
    create: (p: string, mode: number, cb: Cb) => {
      const owner = caller();
      reply('create', p, cb, async () => [await fs.create(p, mode, owner)]);
    },
    read: (p: string, fd: number, buf: Buffer, len: number, pos: number, cb: Cb) => {
      // Bytes already in readahead are answered at once, without a promise (see Reads.readNow).
      // A throw here would escape to the addon and end the process with every open file: the
      // read goes the common way instead, which answers an error as an errno.
      let now: Buffer | undefined;
      try {
        now = fs.readNow(fd, pos, len, buf);
      } catch (err) {
        log.warn({ op: 'read', path: p, err: String(err) }, 'a read from readahead failed; asking again');
      }
      if (now) {
        log.trace({ op: 'read', path: p }, 'operation');
        if (now.buffer !== buf.buffer || now.byteOffset !== buf.byteOffset) now.copy(buf);
        return cb(now.length);
      }
      reply('read', p, cb, async () => {
        // Readahead may have written the bytes into `buf` already (see Prefetcher.read).
        const data = await fs.read(fd, pos, len, buf);
        if (data.buffer !== buf.buffer || data.byteOffset !== buf.byteOffset) data.copy(buf);
        return data.length;
      });
    },
    write: (p: string, fd: number, buf: Buffer, len: number, pos: number, cb: Cb) =>
      reply('write', p, cb, async () => fs.write(fd, buf.subarray(0, len), pos)),
    flush: (p: string, fd: number, cb: Cb) => reply('flush', p, cb, () => nothing(fs.flush(fd))),
    fsync: (p: string, _datasync: number, fd: number, cb: Cb) =>
      reply('fsync', p, cb, () => nothing(fs.fsync(fd))),
    release: (p: string, fd: number, cb: Cb) => reply('release', p, cb, () => nothing(fs.release(fd, p === NO_PATH))),
    truncate: (p: string, size: number, cb: Cb) =>
      reply('truncate', p, cb, () => nothing(fs.truncate(p, size))),
    ftruncate: (p: string, fd: number, size: number, cb: Cb) =>
      reply('ftruncate', p, cb, () => nothing(fs.ftruncate(fd, size))),
    unlink: (p: string, cb: Cb) => reply('unlink', p, cb, () => nothing(fs.unlink(p))),
    mkdir: (p: string, mode: number, cb: Cb) => {
      const owner = caller();
      reply('mkdir', p, cb, () => nothing(fs.mkdir(p, mode, owner)));
    },
    rmdir: (p: string, cb: Cb) => reply('rmdir', p, cb, () => nothing(fs.rmdir(p))),
    rename: (from: string, to: string, cb: Cb) => {
      // Read now, while the addon still holds this rename: libfuse's hide or a user's rename.
      const hiding = binding().fuse_native_hiding?.();
      const request = binding().fuse_native_request?.();
      const hideFor = hiding ? callerHideFor(binding().fuse_native_caller_pid?.()) : undefined;
      reply('rename', from, cb, () => nothing(fs.rename(from, to, hiding, request, hideFor)));
    },
    // fuse-native passes (target, linkpath).
    symlink: (target: string, p: string, cb: Cb) => {
      const owner = caller();
      reply('symlink', p, cb, () => nothing(fs.symlink(target, p, owner)));
    },
    readlink: (p: string, cb: Cb) => reply('readlink', p, cb, async () => [await fs.readlink(p)]),
    chmod: (p: string, mode: number, cb: Cb) => reply('chmod', p, cb, () => change(p, () => fs.chmod(p, mode))),
    chown: (p: string, uid: number, gid: number, cb: Cb) =>
      reply('chown', p, cb, () => change(p, () => fs.chown(p, uid, gid))),
    // fuse-native 2.2.6 as published passes the access time in both arguments;
    // scripts/patch-fuse-native.sh (postinstall) corrects its C glue so mtime is mtime.
    utimens: (p: string, atime: number, mtime: number, cb: Cb) =>
      reply('utimens', p, cb, () => change(p, () => fs.utimens(p, given(atime), given(mtime)))),
    statfs: (p: string, cb: Cb) => reply('statfs', p, cb, async () => [fs.statfs()]),
    // Hard links cannot be expressed in S3.
    link: (p: string, _to: string, cb: Cb) => reply('link', p, cb, async () => errnoNumber('EPERM')),
    mknod: (p: string, mode: number, dev: number, cb: Cb) => {
      const owner = caller();
      reply('mknod', p, cb, () => nothing(fs.mknod(p, mode, dev, owner)));
    },
  };
}

export class FuseMount {
  private readonly fuse: FuseInstance;
  readonly mountpoint: string;
  readonly inFlight = new InFlight();

  constructor(fs: Filesystem, mountpoint: string, options: MountOptions, log: OpLogger) {
    this.mountpoint = mountpoint;
    // big_writes, atomic_o_trunc and nonempty are not among fuse-native's options, but ride along in the
    // fsname option string. Without big_writes the kernel sends 4 KiB writes (about 30 MB/s at
    // fuse-native's cost per call). Without atomic_o_trunc the kernel truncates a file to 0 by
    // path before an open with O_TRUNC, which cannot be told from truncate(2) and so emptied the
    // object at once: `cp` or `>` over a file then lost the old content until the new was closed.
    // Without use_ino libfuse replaces st_ino by its own node numbers, which change when the
    // kernel drops its caches (see fs/inodes.ts).
    const Fuse = fuseNative();
    binding().fuse_native_utime_omit_ok?.();
    binding().fuse_native_nullpath_ok?.();
    this.fuse = new Fuse(mountpoint, operations(fs, log, this.inFlight), {
      fsname: `${options.source.replace(/,/g, '_')},big_writes,atomic_o_trunc,use_ino${options.nonEmpty ? ',nonempty' : ''}`,
      subtype: 'estuary',
      timeout: false,
      allowOther: options.allowOther,
      defaultPermissions: options.allowOther,
      debug: options.debug ?? false,
    });
  }

  async mount(): Promise<void> {
    await new Promise<void>((resolve, reject) => this.fuse.mount((err) => (err ? reject(err) : resolve())));
    this.device = await mountDeviceAt(this.mountpoint);
  }

  /** This mount's device (`major:minor`): what is mounted at the path is this mount only while it shows it. */
  private device?: string;

  /**
   * Lazy unmount (fusermount -uz): the mountpoint disappears for new opens at once, while files
   * already open stay usable until closed — so a `cp` in progress finishes and its close uploads.
   * Nothing is done when the path no longer shows this mount (unmounted from outside, and maybe
   * mounted again since: that other mount is not this one's to detach).
   */
  async detach(): Promise<void> {
    if (this.device !== undefined && (await mountDeviceAt(this.mountpoint)) !== this.device) return;
    await new Promise<void>((resolve, reject) =>
      fuseNative().unmount(this.mountpoint, (err) => (err ? reject(err) : resolve())),
    );
  }

  /**
   * Calls `onGone` once the kernel has ended this mount's connection: unmounted from outside
   * (`fusermount -u`, `umount`), or detached lazily and its last open file closed. The path is
   * not what counts: a bind mount of it may still be in use, another mount may take it, and
   * reading the mount table needs a free descriptor. An addon that cannot tell (not patched)
   * falls back to the mount table.
   */
  watchEnd(onGone: () => void, everyMs = 1000): { stop(): void } {
    if (typeof binding().fuse_native_session_ended !== 'function') return watchExternalUnmount(this.mountpoint, onGone, everyMs);
    const timer = setInterval(() => {
      if (!this.sessionEnded()) return;
      clearInterval(timer);
      onGone();
    }, everyMs);
    timer.unref();
    return { stop: () => clearInterval(timer) };
  }

  /**
   * True once the kernel has ended the connection: no request will come any more. After a lazy
   * unmount it ends at the last close, and drops that file's RELEASE if it was still queued, so a
   * file counted open then is closed. False also where the addon cannot tell (not rebuilt by
   * scripts/patch-fuse-native.sh).
   */
  sessionEnded(): boolean {
    return binding().fuse_native_session_ended?.() === true;
  }

  /**
   * Lets the process exit once the kernel has let go. fuse-native's own unmount() runs fusermount
   * again (which fails once detached) before this step, so call its native half directly.
   */
  release(): void {
    const thread = (this.fuse as unknown as { _thread: Buffer | null })._thread;
    if (thread) binding().fuse_native_unmount(this.mountpoint, thread);
  }
}
