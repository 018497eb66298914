// The hidden names of files put back after a failed rename over them (Removals.undoHide). libfuse
// renamed such a file's node to `.fuse_hidden…` before the rename that failed, and does not rename
// it back: its open descriptors, and the kernel's cached entry of the file's name (libfuse's
// entry_timeout, 1 s), still call the file by the hidden name. This table says which file each
// such name stands for, follows that file through renames and removals, and ends a name shortly
// after libfuse unlinks it at the last close, once no cached entry can still point at it. Pure:
// the caller passes the time.

/** How long a name lasts after its last close: twice libfuse's default entry_timeout of 1 s. */
export const PUT_BACK_NAME_GRACE_MS = 2000;
/** Hidden names followed in a row at most: each is one failed rename over a file still open. */
const CHAIN_LIMIT = 16;

interface PutBackName {
  /** The file's own path. */
  path: string;
  /** Set at the name's last close: the name ends then. */
  endsAt?: number;
}

export class PutBackNames {
  private readonly names = new Map<string, PutBackName>();

  /** `hidden` stands for the file at `path`, while descriptors libfuse knows by it are open. */
  set(hidden: string, path: string): void {
    this.names.set(hidden, { path });
  }

  /** Whether `name` is a hidden name standing for a file (or did, until just now). */
  has(name: string, now: number): boolean {
    return this.lookup(name, now) !== undefined;
  }

  /**
   * The path `name` stands for, or `name` itself. A name may stand for another hidden name (the
   * file was hidden again, and put back again): followed to the end.
   */
  named(name: string, now: number): string {
    let path = name;
    for (let hops = 0; hops < CHAIN_LIMIT; hops++) {
      const next = this.lookup(path, now)?.path;
      if (next === undefined || next === name) return path;
      path = next;
    }
    return path;
  }

  /** A descriptor was opened through `name` (the kernel's cached entry): it is open again. */
  opened(name: string, now: number): void {
    const entry = this.lookup(name, now);
    if (entry) delete entry.endsAt;
  }

  /** libfuse unlinked `hidden` at its last close; false when it is no name of this table. */
  lastClose(hidden: string, now: number): boolean {
    const entry = this.lookup(hidden, now);
    if (!entry) return false;
    entry.endsAt ??= now + PUT_BACK_NAME_GRACE_MS;
    return true;
  }

  /** A hidden name whose descriptors are still open and which stands for `path`, if any. */
  openFor(path: string, now: number): string | undefined {
    for (const [name, entry] of this.names) if (entry.path === path && entry.endsAt === undefined && this.live(name, entry, now)) return name;
    return undefined;
  }

  /** The file at `path` was renamed to `to`: its hidden names follow it. */
  renamed(path: string, to: string): void {
    for (const entry of this.names.values()) if (entry.path === path) entry.path = to;
  }

  /** Directory `from` was renamed to `to`: names in it, and files under it, move with it. */
  movedTree(from: string, to: string): void {
    const under = (p: string) => p.startsWith(`${from}/`);
    const moved = (p: string) => to + p.slice(from.length);
    for (const [name, entry] of [...this.names]) {
      if (under(entry.path)) entry.path = moved(entry.path);
      if (under(name)) {
        this.names.delete(name);
        this.names.set(moved(name), entry);
      }
    }
  }

  /**
   * The file at `path` was removed while descriptors of it stay open under the hidden name `to`
   * (libfuse's hide, or the mount's own for a put-back file): names whose descriptors are open
   * stand for that removed file now; names past their last close end.
   */
  hidden(path: string, to: string): void {
    for (const [name, entry] of [...this.names]) {
      if (entry.path !== path || name === to) continue;
      if (entry.endsAt === undefined) entry.path = to;
      else this.names.delete(name);
    }
    this.names.delete(to);
  }

  /** The file at `path` was removed with nothing of it open: its names end. */
  removed(path: string): void {
    for (const [name, entry] of [...this.names]) if (entry.path === path) this.names.delete(name);
  }

  private lookup(name: string, now: number): PutBackName | undefined {
    const entry = this.names.get(name);
    return entry && this.live(name, entry, now) ? entry : undefined;
  }

  private live(name: string, entry: PutBackName, now: number): boolean {
    if (entry.endsAt === undefined || now <= entry.endsAt) return true;
    this.names.delete(name);
    return false;
  }
}
