// One upstream fetch shared by every request that misses on the same key (collapsed forwarding).
//
// The fill writes the body to a temporary file as fast as the upstream sends it; every client
// (the one that started it and all that joined) is a reader that reads that file at its own pace
// and is woken whenever more bytes land. So a slow client never slows the fill or the others:
// what it has not taken yet waits on disk. A reader never sends its final byte (or the final
// chunk of an unknown-length body) before the fill has completed and been verified, so a body
// that turns out truncated or corrupt is never delivered whole: the client sees an error.

import type { FileHandle } from 'node:fs/promises';
import type { EntryMeta } from './entry.ts';

/**
 * pending: waiting for upstream headers. streaming: body being written. done: stored.
 * failed: nothing stored, `error` says why. pass: the response may not be stored or shared; only
 * the request that started the fill gets it, the others ask upstream on their own.
 * revalidated: a 304 refreshed the stored entry; everyone serves that.
 */
export type FillState = 'pending' | 'streaming' | 'done' | 'failed' | 'pass' | 'revalidated';

/** What a fill's leader tells other worker processes (gateway/cluster/). */
export type FillEvent =
  | {
      readonly type: 'streaming';
      readonly meta: EntryMeta;
      readonly length?: number;
      readonly tempPath: string;
    }
  | { readonly type: 'progress'; readonly written: number }
  | { readonly type: 'done'; readonly meta: EntryMeta; readonly path: string; readonly stored: boolean }
  | { readonly type: 'revalidated'; readonly meta: EntryMeta }
  | { readonly type: 'pass' }
  | {
      readonly type: 'failed';
      readonly proxyError: string;
      readonly status: number;
      readonly message: string;
      readonly passable?: boolean;
    };

export class Fill {
  readonly key: string;
  /** Told about every change when other processes follow this fill; undefined in one process. */
  observer?: (event: FillEvent) => void;
  /** Final file of a done fill. */
  path?: string;
  /**
   * False for a fill that delivered its whole body but did not store it (a body of unknown length
   * that outgrew --max-object-size): readers complete, nobody finds it in the cache afterwards.
   */
  stored = true;
  /**
   * Set when a write through the gateway invalidated this key while the fill ran: its bytes may
   * be the replaced version, so they reach the readers already waiting but are not stored, and
   * no request that arrives afterwards joins it.
   */
  overtaken = false;
  state: FillState = 'pending';
  /** Known once headers arrived and the response is being stored. */
  meta?: EntryMeta;
  /** Content-Length the upstream announced, if any. */
  length?: number;
  /** Bytes on disk so far. */
  written = 0;
  error?: Error;
  /** Why the response was not stored (state pass), for Cache-Status. */
  passReason?: string;
  /** The upstream response, for the one request that started a fill that turned out to be a pass. */
  pass?: unknown;
  /**
   * The body so far, in the order received, when it is small enough to end up in the memory tier:
   * readers then send these very buffers instead of reading the file back, so a herd of a
   * thousand clients costs no file reads at all.
   */
  chunks?: Buffer[];
  /** Readers that joined after the first one. */
  joined = 0;
  #readFh?: FileHandle;
  #refs = 0;
  #wake: (() => void)[] = [];

  constructor(key: string) {
    this.key = key;
  }

  /** Resolves at the next change of state or size. */
  changed(): Promise<void> {
    if (this.state !== 'pending' && this.state !== 'streaming') return Promise.resolve();
    return new Promise((resolve) => this.#wake.push(resolve));
  }

  notify(): void {
    const wake = this.#wake;
    this.#wake = [];
    for (const w of wake) w();
  }

  /** Waits until the headers are known (or the fill failed / turned out not cacheable). */
  async headers(): Promise<FillState> {
    while (this.state === 'pending') await this.changed();
    return this.state;
  }

  startStreaming(meta: EntryMeta, length: number | undefined, readFh: FileHandle, tempPath: string): void {
    this.observer?.({ type: 'streaming', meta, length, tempPath });
    this.meta = meta;
    this.length = length;
    this.#readFh = readFh;
    this.#refs = 1; // the fill's own reference, dropped when it finishes
    this.state = 'streaming';
    this.notify();
  }

  progress(bytes: number): void {
    this.written += bytes;
    this.observer?.({ type: 'progress', written: this.written });
    this.notify();
  }

  finish(state: 'done' | 'failed' | 'pass' | 'revalidated', error?: Error): void {
    if (this.state !== 'pending' && this.state !== 'streaming') return;
    if (this.observer) this.observer(this.#event(state, error));
    this.state = state;
    this.error = error;
    this.notify();
    if (this.#readFh) this.release();
  }

  #event(state: 'done' | 'failed' | 'pass' | 'revalidated', error?: Error): FillEvent {
    if (state === 'done') return { type: 'done', meta: this.meta!, path: this.path!, stored: this.stored };
    if (state === 'revalidated') return { type: 'revalidated', meta: this.meta! };
    if (state === 'pass') return { type: 'pass' };
    const e = error as { proxyError?: string; status?: number; passable?: boolean } | undefined;
    return {
      type: 'failed',
      proxyError: e?.proxyError ?? 'proxy_internal_error',
      status: e?.status ?? 502,
      message: error?.message ?? 'fill failed',
      passable: e?.passable,
    };
  }

  /** A reader takes a reference to the shared read handle; undefined if the fill is not streaming. */
  acquire(): FileHandle | undefined {
    if (!this.#readFh || this.#refs === 0) return undefined;
    this.#refs++;
    return this.#readFh;
  }

  release(): void {
    this.#refs--;
    if (this.#refs === 0) {
      this.#readFh?.close().catch(() => undefined);
    }
  }
}
