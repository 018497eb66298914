// A reader of a file another descriptor of this mount is writing: see "open, while another
// process of this host writes the file" in docs/SEMANTICS.md.

import type { ReadableHandle } from './file-handle.ts';
import type { WriteHandle } from './write-handle.ts';

/**
 * A reader of a file that another handle of this mount is writing: it reads the writer's bytes
 * while the writer holds them, and the file as closed after that (see Filesystem.openShared).
 */
export class WriterView {
  readonly kind = 'read';
  path: string;
  private readonly writer: WriteHandle;
  private readonly reopen: () => Promise<ReadableHandle>;
  private after: Promise<ReadableHandle> | undefined;

  constructor(path: string, writer: WriteHandle, reopen: () => Promise<ReadableHandle>) {
    this.path = path;
    this.writer = writer;
    this.reopen = reopen;
  }

  async read(offset: number, length: number): Promise<Buffer> {
    const local = await this.writer.readLocal(offset, length);
    if (local) return local;
    this.after ??= this.reopen();
    return (await this.after).read(offset, length);
  }

  /** This mount published new content: what was reopened before shows the old one. */
  async invalidate(): Promise<void> {
    const after = this.after;
    this.after = undefined;
    await (await after?.catch(() => undefined))?.close();
  }

  async close(): Promise<void> {
    await this.invalidate();
  }
}
