// libfuse's names for files removed while open, told apart from a user's rename to such a name.
//
// Without hard_remove, libfuse 2 does not pass on the removal of a file that is still open: it
// renames the file to `.fuse_hidden%08x%08x` (its node number, then a count of such names made
// since the mount started, one more per name it tries) and removes that name after the last close
// (fuse.c: hidden_name, hide_node, fuse_do_release). A user may rename a file to any name of that
// form; only the counts libfuse is about to use are its own. hard_remove is no way out: with it,
// libfuse answers fstat(2) of a removed open file with ENOENT, because the kernel asks for a
// file's attributes by node, not by descriptor.

const HIDDEN_NAME = /^\.fuse_hidden[0-9a-f]{8}([0-9a-f]{8})$/;
/**
 * How far libfuse's count may be from the highest seen: a hide tries up to 10 names, a failed
 * one leaves its count unused, and hides on several FUSE threads may reach the mount out of order.
 */
const COUNT_SLACK = 64;

export class HiddenNames {
  #highest = 0;
  /** The counts taken, so that the same name twice is libfuse's only once. */
  readonly #taken = new Set<number>();

  /**
   * Whether `name` is the name libfuse gives a removed open file now; if so, it is counted. A name
   * of that form far from libfuse's count (`.fuse_hidden0123456789abcdef`) is a user's.
   */
  take(name: string): boolean {
    const m = HIDDEN_NAME.exec(name);
    if (!m) return false;
    const count = Number.parseInt(m[1]!, 16);
    if (this.#taken.has(count) || count <= this.#highest - COUNT_SLACK || count > this.#highest + COUNT_SLACK) return false;
    this.#taken.add(count);
    this.#highest = Math.max(this.#highest, count);
    for (const c of this.#taken) if (c <= this.#highest - COUNT_SLACK) this.#taken.delete(c);
    return true;
  }
}
