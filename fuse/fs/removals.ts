// Removing files that are still open: libfuse's hide (the rename it makes inside an unlink, or
// before a rename over an open file), the writers held while their file's object goes, and the
// hide undone when the rename it made way for fails. See "unlink" in docs/SEMANTICS.md.

import { type Handle, LocalReadHandle, ReadHandle } from './file-handle.ts';
import { parentOf } from './keys.ts';
import { type Attr, writeOptionsOf } from './metadata.ts';
import type { WriteHandle } from './write-handle.ts';
import { Writes } from './writes.ts';

/** The name libfuse gives a removed file that is still open: `.fuse_hidden` and 16 hex digits. */
export const HIDDEN_NAME = /^\.fuse_hidden[0-9a-f]{16}$/;

/** A hide, kept for the rest of its kernel request in case that request is a rename over the file. */
interface Hide {
  readonly path: string;
  readonly hidden: string;
  readonly attr: Attr;
  /** Known to be a rename's: nothing was removed yet, the rename over the file removes it. */
  readonly beforeRename?: boolean;
  /** For such a hide: taken for an unlink's after all if its rename does not follow. */
  timer?: NodeJS.Timeout;
}

/**
 * How long a rename's hide waits for its rename, which libfuse asks for right after it, on the
 * same thread: past it the hide is taken for an unlink's, whatever the caller's system call said.
 */
const RENAME_AFTER_HIDE_MS = 1000;

/** Hides remembered: far more than the requests libfuse's threads can have under way at once. */
const HIDES_KEPT = 256;

export class Removals extends Writes {
  private readonly hides = new Map<number, Hide>();

  /**
   * libfuse does not pass on the removal of a file that is still open (the mount runs without
   * hard_remove, whose removed files lose their paths): it renames the file to .fuse_hidden<N>
   * and unlinks that name after the last close. For the bucket that rename is the unlink, and
   * happens now: the open descriptors keep the content locally (WriteHandle.unlink,
   * keepReaders), the object is deleted, and the hidden name lives only here. A crash of the mount
   * then leaves nothing of the file in the bucket, and no close uploads it. `request`: the kernel
   * request the hide belongs to (see undoHide).
   */
  protected async hideOpen(from: string, to: string, src: Attr, request?: number): Promise<void> {
    await this.removeWritten(from, async () => {
      await this.keepReaders(from);
      await this.client.delete(this.key(from));
      const held = [...this.handles.values()].filter((h) => h.path === from);
      for (const h of held) h.path = to;
      // A removed file hidden again (a rename over its hidden name): one hidden name, the new one.
      this.hidden.delete(from);
      this.hidden.set(to, src);
      this.putBackNames.hidden(from, to);
    });
    this.forget(from);
    this.touchDir(parentOf(from));
    if (request) {
      this.hides.set(request, { path: from, hidden: to, attr: src });
      if (this.hides.size > HIDES_KEPT) this.hides.delete(this.hides.keys().next().value!);
    }
  }

  /**
   * libfuse's hide of the open file at `from`, in a request known to be a rename over it: nothing
   * changes yet. The rename that follows in the same request replaces the file as any rename over
   * a file does, and its open descriptors then go on as a removed file's under the hidden name
   * (renameOverHidden); if it fails, nothing was removed, and the hidden name stands for the file.
   */
  protected async noteRenameHide(from: string, to: string, src: Attr, request: number | undefined): Promise<void> {
    if (!request) return this.hideOpen(from, to, src, request);
    const hide: Hide = { path: from, hidden: to, attr: src, beforeRename: true };
    this.hides.set(request, hide);
    if (this.hides.size > HIDES_KEPT) this.hides.delete(this.hides.keys().next().value!);
    hide.timer = setTimeout(() => {
      if (this.hides.get(request) !== hide) return;
      this.hides.delete(request);
      this.o.log.warn({ path: from }, 'no rename followed the hide of an open file that its caller was renaming over: removing it as an unlink');
      this.hideOpen(from, to, src, request).catch((err: unknown) =>
        this.o.log.error({ path: from, err: String(err) }, 'could not remove a file hidden by libfuse'),
      );
    }, RENAME_AFTER_HIDE_MS);
  }

  /** `rename` over `to`, after a hide of it known to be a rename's (see noteRenameHide). */
  protected async renameOverHidden(to: string, hide: Hide, rename: () => Promise<void>): Promise<void> {
    const held = [...this.handles.values()].filter((h) => h.path === to);
    try {
      await rename();
    } catch (err) {
      // libfuse calls the file by the hidden name from now on.
      this.putBackNames.set(hide.hidden, to);
      throw err;
    }
    // Replaced: its descriptors go on as a removed file's, under the name libfuse gave it.
    for (const h of held) h.path = hide.hidden;
    this.hidden.set(hide.hidden, hide.attr);
    this.putBackNames.hidden(to, hide.hidden);
  }

  /** The hide made earlier in kernel request `request` of the file at `path`, if there was one. */
  protected takeHide(request: number | undefined, path: string): Hide | undefined {
    if (!request) return undefined;
    const hide = this.hides.get(request);
    if (hide?.path !== path) return undefined;
    this.hides.delete(request);
    clearTimeout(hide.timer);
    return hide;
  }

  /**
   * A rename over an open file is libfuse's hide of that file and then the rename, in one kernel
   * request; when the rename failed, the file comes back under its name. Its writers go on
   * writing it and publish what they hold at close; with none, a reader's copy is put back now.
   * libfuse still knows the file by the hidden name (as does the kernel's cached entry of its
   * name, for up to a second), and unlinks that at the last close, which then ends only the name;
   * until then the hidden name stands for the file (put-back-names.ts).
   */
  protected async undoHide(hide: Hide): Promise<void> {
    const held = [...this.handles.values()].filter((h) => h.path === hide.hidden);
    const writers = new Set(held.filter((h): h is WriteHandle => h.kind === 'write'));
    if (writers.size === 0) {
      const back = await this.putBack(hide, held).catch((err: unknown) => {
        this.o.log.error({ path: hide.path, err: String(err) }, 'a rename over an open file failed after its object was deleted, and putting it back failed too');
        return undefined;
      });
      // The file stays removed, its descriptors open under the hidden name, as after an unlink.
      if (back === false) this.o.log.error({ path: hide.path }, 'a rename over an open file failed after its object was deleted: nothing held a copy to put back');
      if (!back) return;
    }
    for (const h of held) h.path = hide.path;
    this.hidden.delete(hide.hidden);
    this.putBackNames.set(hide.hidden, hide.path);
    for (const w of writers) await w.relink();
    if (writers.size === 0) this.remember(hide.path, hide.attr);
    this.touchDir(parentOf(hide.path));
  }

  /** Puts the object back from the first reader that holds a copy of it; false when none does. */
  private async putBack(hide: Hide, held: readonly Handle[]): Promise<boolean> {
    const key = this.key(hide.path);
    const options = writeOptionsOf(hide.attr);
    for (const r of held) {
      if (r instanceof ReadHandle && (await r.putBack(key, options))) return true;
      if (r instanceof LocalReadHandle && (await r.putBack(key, options, this.settings.staging))) return true;
    }
    return false;
  }

  /**
   * Removes the file at `path` with `remove`, its open writers held meanwhile (WriteHandle.unlink).
   * The objects of names they were renamed away from go first, not at their close; once the
   * removal succeeded the writers keep what they hold locally and publish nothing. A removal that
   * failed leaves them writing the file, and their close publishes it.
   */
  protected async removeWritten(path: string, remove: () => Promise<void>): Promise<void> {
    const writers = this.writersOf(path);
    const lost = new Map<WriteHandle, unknown>();
    const held = writers.reduceRight<() => Promise<void>>(
      (inner, w) => async () => {
        const err = await w.unlink(inner);
        if (err !== undefined) lost.set(w, err);
      },
      async () => {
        for (const w of writers) await this.dropRenamedAway(w);
        await remove();
      },
    );
    await held();
    for (const [w, err] of lost) {
      this.o.log.warn({ path: w.path, err: String(err) }, 'an open writer of a removed file cannot keep what it holds');
    }
  }

  /** Whether a descriptor of the file at `path` is open (a write, a read, or a reader of a writer). */
  protected isOpen(path: string): boolean {
    for (const h of this.handles.values()) if (h.path === path) return true;
    return false;
  }
}
