// Inode numbers, stable for as long as the name exists: the kernel forgets its own numbering when
// it drops its caches (`echo 2 > /proc/sys/vm/drop_caches`, or memory pressure), and tar, rsync -H,
// du and git's index compare st_ino between two stats. A number is a hash of the key (a
// directory's with its trailing slash, so a directory and a file of the same name differ),
// so it is the same after a cache drop, a forget, and mostly after a remount. fuse-native carries
// st_ino as 32 bits: among 77,000 keys two hash alike about half the time, so the table remembers
// which key took a number, and a later key that hashes alike takes the next free one. A rename
// hands the number on to the new key, as a rename keeps a local file's inode. Both last as long
// as the mount runs: after a remount such a key has its own hash again. Hard links do not exist
// here: every number names one key. The table costs about 100 bytes per key seen. Pure: no I/O.

import { createHash } from 'node:crypto';

/** FUSE's root inode; never handed out for a key. */
export const ROOT_INO = 1;

const SPACE = 2 ** 32;

export class InodeTable {
  /** Every number handed out, to its key. */
  private readonly owners = new Map<number, string>();
  /** Keys whose number is not their hash (taken first, or handed on by a rename), to it. */
  private readonly moved = new Map<string, number>();

  /** The number of `key` (a directory's ends in `/`). */
  of(key: string): number {
    const moved = this.moved.get(key);
    if (moved !== undefined) return moved;
    let ino = inodeHash(key);
    const owner = this.owners.get(ino);
    if (owner === key) return ino;
    if (owner === undefined) {
      this.owners.set(ino, key);
      return ino;
    }
    while (this.owners.has(ino)) ino = ino + 1 >= SPACE ? 2 : ino + 1;
    this.owners.set(ino, key);
    this.moved.set(key, ino);
    return ino;
  }

  /** `from` was renamed to `to`: `to` keeps the number `from` had. */
  rename(from: string, to: string): void {
    const ino = this.of(from);
    this.moved.delete(from);
    this.owners.set(ino, to);
    if (inodeHash(to) === ino) this.moved.delete(to);
    else this.moved.set(to, ino);
  }

  /** A directory renamed: every key under `from` (ending in `/`) moves under `to`. */
  renameTree(from: string, to: string): void {
    const under = [...this.owners.values()].filter((k) => k.startsWith(from));
    for (const key of under) this.rename(key, to + key.slice(from.length));
  }

  /** Numbers handed out so far. */
  get size(): number {
    return this.owners.size;
  }
}

/** The number a key gets unless another key took it first. */
export function inodeHash(key: string): number {
  const n = createHash('sha256').update(key).digest().readUInt32BE(0);
  // 0 is no inode, 1 the root.
  return n <= ROOT_INO ? n + 2 : n;
}
