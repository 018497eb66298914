// The local destination of `stage in`: nothing is written outside it, and nothing is written
// through a symlink inside it unless the user asks (--follow-dest-symlinks). Checking the string
// of a path is not enough: with `dst/link -> ../outside`, `link/x` is a clean relative path that
// lands outside. So directories are made one level at a time, each level lstat'ed (a symlink is
// refused, never followed), partial files are created with O_CREAT|O_EXCL|O_NOFOLLOW (a planted
// file or symlink under that name is never written through), and once open, the file's real path
// (/proc/self/fd) must still be inside the destination: a directory swapped for a symlink between
// the check and the open is caught there. What is left is a race with a user who can rename
// directories inside the destination between that last check and the final rename; such a rename
// makes the rename fail (the partial is no longer where it was), it cannot redirect the bytes.

import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readlink, realpath, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Stats } from 'node:fs';
import { NAME_MAX, PARTIAL_SUFFIX } from './keys.ts';

const { O_CREAT, O_EXCL, O_NOFOLLOW, O_RDWR, O_WRONLY } = constants;

export class Destination {
  /** The destination's real path (the root itself may be a symlink: the user named it). */
  readonly root: string;
  readonly caseInsensitive: boolean;
  readonly #follow: boolean;

  private constructor(root: string, caseInsensitive: boolean, follow: boolean) {
    this.root = root;
    this.caseInsensitive = caseInsensitive;
    this.#follow = follow;
  }

  static async open(dir: string, followSymlinks: boolean): Promise<Destination> {
    await mkdir(dir, { recursive: true });
    const root = await realpath(dir);
    return new Destination(root, await probeCaseInsensitive(root), followSymlinks);
  }

  /** Absolute path of `rel` ('/'-separated, already checked by localRel). */
  path(rel: string): string {
    return join(this.root, ...rel.split('/'));
  }

  /** The partial file of `key` at `rel`: one per key, so two keys never share one. */
  partial(rel: string, key: string): string {
    const hash = createHash('sha256').update(key).digest('hex');
    const path = this.path(rel);
    const name = `${basename(path)}.${hash.slice(0, 12)}${PARTIAL_SUFFIX}`;
    // A name near NAME_MAX has no room for the suffix: the partial file is then named by the hash
    // alone (still one per key, still in the same directory, so the final rename stays atomic).
    if (Buffer.byteLength(name) <= NAME_MAX) return `${path}.${hash.slice(0, 12)}${PARTIAL_SUFFIX}`;
    return join(dirname(path), `.${hash.slice(0, 32)}${PARTIAL_SUFFIX}`);
  }

  /** Makes the parent directories of `rel`, one level at a time, refusing symlinks and non-directories. */
  async parents(rel: string): Promise<void> {
    const segments = rel.split('/').slice(0, -1);
    let cur = this.root;
    for (let i = 0; i < segments.length; i++) {
      cur = join(cur, segments[i]!);
      let st = await lstatOrUndefined(cur);
      if (!st) {
        await mkdir(cur).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'EEXIST') throw err;
        });
        st = await lstat(cur);
      }
      const shown = segments.slice(0, i + 1).join('/');
      if (st.isSymbolicLink()) {
        if (!this.#follow) throw new Error(`${shown} in the destination is a symlink; not followed (--follow-dest-symlinks follows it)`);
        if (!(await realpath(cur).then((p) => lstat(p)).then((s) => s.isDirectory(), () => false))) throw new Error(`${shown} in the destination is a symlink to no directory`);
      } else if (!st.isDirectory()) {
        throw new Error(`${shown} in the destination is a file, not a directory`);
      }
    }
  }

  /** What is at `rel` now (not following a symlink): undefined when nothing; a symlink is refused. */
  async existing(rel: string): Promise<Stats | undefined> {
    const st = await lstatOrUndefined(this.path(rel));
    if (st?.isSymbolicLink() && !this.#follow) throw new Error(`${rel} in the destination is a symlink; not replaced (--follow-dest-symlinks replaces it)`);
    return st;
  }

  /**
   * Opens a partial file for writing: a new one exclusively (whatever was planted under that
   * name is removed first, never written through), or an existing regular file to resume.
   */
  async openPartial(partial: string, resume: boolean): Promise<FileHandle> {
    let fh: FileHandle;
    if (resume) {
      fh = await open(partial, O_RDWR | O_NOFOLLOW);
      const why = notOurs(await fh.stat());
      if (why !== undefined) {
        await fh.close();
        throw new Error(`${partial} ${why}; not resumed`);
      }
    } else {
      await rm(partial, { force: true }); // removes a symlink itself, not its target
      fh = await open(partial, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644);
    }
    if (!this.#follow) await this.#inside(fh, partial);
    return fh;
  }

  async #inside(fh: FileHandle, partial: string): Promise<void> {
    const real = await readlink(`/proc/self/fd/${fh.fd}`).catch(() => undefined);
    if (real === undefined || real.startsWith(this.root + '/')) return; // no /proc: the lstat walk stands alone
    await fh.close();
    await rm(real, { force: true }); // ours: created exclusively a moment ago
    throw new Error(`${partial} resolved to ${real}, outside the destination (a directory was replaced by a symlink); not written`);
  }
}

/**
 * Why a partial file found on disk must not be resumed (written into), or undefined. A hard link
 * (nlink > 1) may be another name of a file outside the destination: O_NOFOLLOW and the
 * /proc/self/fd check both pass for it, so only the link count shows it. A file of another user
 * was not left by us.
 */
export function notOurs(st: Stats): string | undefined {
  if (!st.isFile()) return 'is not a regular file';
  if (st.nlink > 1) return `has ${st.nlink} links (a hard link may write elsewhere)`;
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) return `belongs to user ${st.uid}, not this one`;
  return undefined;
}

/** True while `path` is still the very file `st` describes (not one another run put under that name). */
export async function stillSame(path: string, st: Stats): Promise<boolean> {
  const now = await lstatOrUndefined(path);
  return now !== undefined && now.dev === st.dev && now.ino === st.ino && now.nlink === 1;
}

async function lstatOrUndefined(path: string): Promise<Stats | undefined> {
  return lstat(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
}

/**
 * Whether names differ only in case on the destination's filesystem: created in lower case and
 * looked up in upper case. Probed, not guessed from the platform (vfat, ext4 casefold, a macOS
 * volume or an SMB share on Linux all fold case). Probed at the root: a different filesystem
 * mounted below it is not probed again.
 */
async function probeCaseInsensitive(root: string): Promise<boolean> {
  const name = `.estuary-case-probe-${randomBytes(6).toString('hex')}`;
  const lower = join(root, name);
  const fh = await open(lower, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
  await fh.close();
  try {
    return (await lstatOrUndefined(join(root, name.toUpperCase()))) !== undefined;
  } finally {
    await rm(lower, { force: true });
  }
}
