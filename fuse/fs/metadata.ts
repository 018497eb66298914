// File attributes and how they are kept in object metadata, in s3fs's format so a bucket written
// by one can be mounted by the other: `x-amz-meta-mode` is the whole st_mode in decimal (type bits
// included), `x-amz-meta-uid`/`-gid` decimal ids, `x-amz-meta-mtime` seconds since the epoch.
// A directory marker is the key `dir/` with content type application/x-directory; a symlink is an
// object whose body is the target and whose mode has the S_IFLNK type. FIFOs, sockets and device
// nodes are empty objects whose mode carries their type, as s3fs's mknod stores them (it keeps no
// device number, and neither do we). Pure: no I/O.

import type { ObjectHead, ObjectInfo, WriteOptions } from '../s3/object-client.ts';

export const S_IFMT = 0o170000;
export const S_IFREG = 0o100000;
export const S_IFDIR = 0o040000;
export const S_IFLNK = 0o120000;
export const S_IFIFO = 0o010000;
export const S_IFSOCK = 0o140000;
export const S_IFCHR = 0o020000;
export const S_IFBLK = 0o060000;

export const DIRECTORY_CONTENT_TYPE = 'application/x-directory';

/** Special files: what mknod makes besides regular files. */
export type SpecialKind = 'fifo' | 'socket' | 'chardev' | 'blockdev';
export type Kind = 'file' | 'dir' | 'symlink' | SpecialKind;

const SPECIAL_BITS: Record<SpecialKind, number> = {
  fifo: S_IFIFO,
  socket: S_IFSOCK,
  chardev: S_IFCHR,
  blockdev: S_IFBLK,
};

/** The special kind a mode's type bits name, if any. */
export function specialKindOf(mode: number): SpecialKind | undefined {
  const type = mode & S_IFMT;
  for (const [kind, bits] of Object.entries(SPECIAL_BITS)) if (bits === type) return kind as SpecialKind;
  return undefined;
}

export interface Attr {
  readonly kind: Kind;
  /** Permission bits only (07777); the type comes from `kind`. */
  readonly perm: number;
  readonly uid: number;
  readonly gid: number;
  readonly size: number;
  readonly mtimeMs: number;
  /**
   * When mode, owner, name or content last changed: `x-amz-meta-ctime` where a copy stored it
   * (s3fs's field), else the object's Last-Modified, since every change rewrites the object.
   * Unset means the mtime.
   */
  readonly ctimeMs?: number;
  readonly etag?: string;
  /** True when taken from a listing, which carries no user metadata: mode, owner are defaults. */
  readonly fromListing?: boolean;
}

export interface AttrDefaults {
  readonly uid: number;
  readonly gid: number;
  readonly fileMode: number;
  readonly dirMode: number;
  /** Time shown for directories that exist only as key prefixes. */
  readonly mountedAtMs: number;
}

export function typeBits(kind: Kind): number {
  if (kind === 'dir') return S_IFDIR;
  if (kind === 'symlink') return S_IFLNK;
  return kind === 'file' ? S_IFREG : SPECIAL_BITS[kind];
}

export function stMode(attr: Attr): number {
  return typeBits(attr.kind) | attr.perm;
}

function parseIntMeta(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value.trim());
}

/** s3fs writes whole seconds or `seconds.nanoseconds`; both read back as milliseconds. */
function parseMtime(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value.trim());
  return Number.isFinite(n) && n >= 0 ? Math.round(n * 1000) : undefined;
}

/**
 * Stored metadata for a copy that changes the object's attributes or name: without a stored
 * ctime (s3fs's), so the copy's Last-Modified, the moment of the change, becomes the ctime.
 */
export function withoutCtime(stored: Record<string, string>): Record<string, string> {
  const { ctime: _, ...rest } = stored;
  return rest;
}

/**
 * A time as `x-amz-meta-mtime`/`-ctime` hold it: whole seconds as s3fs writes them, and a time
 * with milliseconds as `seconds.nanoseconds`, so what the mount shows before and after its cache
 * expires is the same.
 */
export function storedTime(ms: number): string {
  const whole = Math.round(ms);
  const sec = Math.floor(whole / 1000);
  const frac = whole - sec * 1000;
  return frac === 0 ? String(sec) : `${sec}.${String(frac * 1_000_000).padStart(9, '0')}`;
}

/**
 * `withMtime` false leaves the mtime and ctime to the object's Last-Modified (see WriteHandle);
 * true stores both as the attributes say, so a stat after the cache expires shows what one
 * before it did (`tar` compares them).
 */
export function metadataOf(attr: Attr, withMtime = true): Record<string, string> {
  const meta: Record<string, string> = {
    mode: String(stMode(attr)),
    uid: String(attr.uid),
    gid: String(attr.gid),
  };
  if (withMtime) {
    meta.mtime = storedTime(attr.mtimeMs);
    if (attr.ctimeMs !== undefined) meta.ctime = storedTime(attr.ctimeMs);
  }
  return meta;
}

export function writeOptionsOf(attr: Attr, withMtime = true): WriteOptions {
  return {
    metadata: metadataOf(attr, withMtime),
    contentType: attr.kind === 'dir' ? DIRECTORY_CONTENT_TYPE : 'application/octet-stream',
  };
}

/** Attributes from a HEAD; `isMarker` when the key ends in `/`. */
export function attrFromHead(head: ObjectHead, defaults: AttrDefaults, isMarker: boolean): Attr {
  const mode = parseIntMeta(head.metadata.mode);
  let kind: Kind = 'file';
  if (isMarker || head.contentType === DIRECTORY_CONTENT_TYPE) kind = 'dir';
  else if (mode !== undefined && (mode & S_IFMT) === S_IFLNK) kind = 'symlink';
  else if (mode !== undefined && (mode & S_IFMT) === S_IFDIR) kind = 'dir';
  else if (mode !== undefined) kind = specialKindOf(mode) ?? 'file';
  const perm = mode !== undefined ? mode & 0o7777 : kind === 'dir' ? defaults.dirMode : defaults.fileMode;
  return {
    kind,
    perm: kind === 'symlink' ? 0o777 : perm,
    uid: parseIntMeta(head.metadata.uid) ?? defaults.uid,
    gid: parseIntMeta(head.metadata.gid) ?? defaults.gid,
    size: kind === 'dir' ? 0 : head.size,
    mtimeMs: parseMtime(head.metadata.mtime) ?? head.lastModified.getTime(),
    ctimeMs: parseMtime(head.metadata.ctime) ?? head.lastModified.getTime(),
    etag: head.etag,
  };
}

/**
 * Attributes from a listing entry: size and time are real, the rest are the mount's defaults.
 * Some stores list LastModified to the millisecond (MinIO, Ceph RGW) while a HEAD or GET says it
 * in whole seconds (an HTTP date): the listing's is cut to the second, so that a file's mtime does
 * not move when an open refreshes it (tar would find the file "changed as we read it").
 */
export function attrFromListing(info: ObjectInfo, defaults: AttrDefaults): Attr {
  const lastModified = Math.floor(info.lastModified.getTime() / 1000) * 1000;
  return {
    kind: 'file',
    perm: defaults.fileMode,
    uid: defaults.uid,
    gid: defaults.gid,
    size: info.size,
    mtimeMs: lastModified,
    ctimeMs: lastModified,
    etag: info.etag,
    fromListing: true,
  };
}

export function implicitDirAttr(defaults: AttrDefaults): Attr {
  return {
    kind: 'dir',
    perm: defaults.dirMode,
    uid: defaults.uid,
    gid: defaults.gid,
    size: 0,
    mtimeMs: defaults.mountedAtMs,
    fromListing: true,
  };
}

export function sameMetadata(a: Attr, b: Attr): boolean {
  return (
    a.perm === b.perm &&
    a.uid === b.uid &&
    a.gid === b.gid &&
    Math.round(a.mtimeMs) === Math.round(b.mtimeMs)
  );
}
