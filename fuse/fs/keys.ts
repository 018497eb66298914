// Paths in the mount and keys in the bucket. Pure: no I/O. A mount of BUCKET/PREFIX sees the keys
// under `PREFIX/`; a directory `/a/b` is the key prefix `PREFIX/a/b/`, its marker object the key
// `PREFIX/a/b/` itself (s3fs's convention), and a file `/a/b/c` the key `PREFIX/a/b/c`.

import { createHash } from 'node:crypto';
import { S3_LIMITS } from '../s3/object-client.ts';
import { notUtf8 } from '../s3/url-keys.ts';
import { FsError } from './errno.ts';

/** Linux's NAME_MAX: longer names cannot be created through the kernel anyway. */
export const NAME_MAX = 255;

/** Normalises a mount prefix: no leading slash, one trailing slash, or empty for the whole bucket. */
export function normalisePrefix(prefix: string): string {
  const trimmed = prefix.replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? '' : `${trimmed}/`;
}

export function fileKey(prefix: string, path: string): string {
  return prefix + path.replace(/^\/+/, '');
}

/** The prefix under which a directory's children live (the marker object's key). */
export function dirPrefix(prefix: string, path: string): string {
  return path === '/' ? prefix : `${fileKey(prefix, path)}/`;
}

export function parentOf(path: string): string {
  const cut = path.lastIndexOf('/');
  return cut <= 0 ? '/' : path.slice(0, cut);
}

export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

export function joinPath(dir: string, name: string): string {
  return dir === '/' ? `/${name}` : `${dir}/${name}`;
}

/**
 * Refuses names the bucket could not hold: ENAMETOOLONG past NAME_MAX or S3's 1024-byte keys (in
 * bytes of UTF-8, the mount's prefix included). A directory's marker key (`dir`) carries one more
 * byte, the trailing slash.
 */
export function checkNewPath(prefix: string, path: string, dir = false): void {
  if (Buffer.byteLength(baseName(path)) > NAME_MAX)
    throw new FsError('ENAMETOOLONG', `name too long: ${path}`);
  // Such a key would be listed under a stand-in name of its own, never under this one.
  if (STAND_IN.test(baseName(path)))
    throw new FsError('EINVAL', `${path}: names of the form unnamable-<12 hex digits> are kept for keys no name can show`);
  if (Buffer.byteLength(fileKey(prefix, path)) + (dir ? 1 : 0) > S3_LIMITS.maxKeyBytes) {
    throw new FsError('ENAMETOOLONG', `key longer than ${S3_LIMITS.maxKeyBytes} bytes: ${path}`);
  }
}

/** What standInName() makes: names of this form are kept for stand-ins (see entryName). */
export const STAND_IN = /^unnamable-[0-9a-f]{12}$/;

/**
 * The directory-entry name a listed key or common prefix stands for, or undefined for keys that
 * no POSIX name can show: empty components (`a//b`), `.` and `..`, names with NUL, names longer
 * than NAME_MAX, keys holding bytes that are not UTF-8 (url-keys.ts marks them), and names of the
 * stand-in form, which would be taken for another key's stand-in (they get one of their own).
 */
export function entryName(listedPrefix: string, key: string): string | undefined {
  if (!key.startsWith(listedPrefix)) return undefined;
  const rest = key.slice(listedPrefix.length).replace(/\/$/, '');
  if (rest === '' || rest.includes('/')) return undefined;
  if (rest === '.' || rest === '..' || rest.includes('\0') || notUtf8(rest)) return undefined;
  if (Buffer.byteLength(rest) > NAME_MAX || STAND_IN.test(rest)) return undefined;
  return rest;
}

/**
 * The name under which a directory shows a key that entryName() cannot name, so the directory
 * does not look empty (and then refuse rmdir) and the object can be read, renamed to a proper
 * name, or removed. The same for the same key, and not a name anyone would pick. `key` is as
 * listed: a common prefix with its trailing slash, so the object `a/..` and the prefix `a/../`
 * get names of their own.
 */
export function standInName(key: string): string {
  return `unnamable-${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
}

/** A key that is not UTF-8 (url-keys.ts marks its bytes): no request can name it. */
export function reachableKey(key: string): boolean {
  return !notUtf8(key);
}
