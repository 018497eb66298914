// What the primary has sent a worker that the worker has not read yet, bounded. Every stored
// object is announced to every other worker with its headers, and node queues what a worker does
// not read (in the IPC pipe's buffer, then in the primary's memory, without limit): a worker frozen
// for an hour under load would take the primary, and so the whole gateway, down with it. Past
// OUTBOX_MAX_BYTES a worker is declared stuck: nothing more is queued for it and it is replaced
// (the replacement rebuilds its index from the disk, so what it was not told is not lost).

import type { Worker } from 'node:cluster';
import type { ToWorker } from './messages.ts';

/**
 * A worker that reads its channel between requests keeps its backlog within a few messages; 8 MiB
 * is about 700 announcements of objects with 12 KB of headers, or 50,000 invalidations: only a
 * worker that has stopped reading gets there, and the primary's memory stays bounded by it.
 */
export const OUTBOX_MAX_BYTES = 8 * 1024 * 1024;

export class Outbox {
  /** Bytes sent to each worker and not yet taken by its channel. */
  readonly #pending = new Map<Worker, number>();
  /** Workers past the bound: stuck, being replaced; nothing more goes to them. */
  readonly #over = new WeakSet<Worker>();
  readonly #onOverflow: (worker: Worker, bytes: number) => void;
  readonly #max: number;

  constructor(onOverflow: (worker: Worker, bytes: number) => void, max = OUTBOX_MAX_BYTES) {
    this.#onOverflow = onOverflow;
    this.#max = max;
  }

  send(worker: Worker, m: ToWorker): void {
    if (this.#over.has(worker) || !worker.isConnected()) return;
    // Node sends JSON; its length is what waits in the pipe or in the primary's memory.
    const size = JSON.stringify(m).length;
    const pending = (this.#pending.get(worker) ?? 0) + size;
    if (pending > this.#max) {
      this.#over.add(worker);
      this.#pending.delete(worker);
      this.#onOverflow(worker, pending);
      return;
    }
    this.#pending.set(worker, pending);
    worker.send(m, () => {
      // Written to the channel (or failed, the worker gone): no longer held by the primary.
      const p = this.#pending.get(worker);
      if (p !== undefined) this.#pending.set(worker, p - size);
    });
  }

  /** The largest backlog of any worker now, in bytes. */
  largest(): number {
    return Math.max(0, ...this.#pending.values());
  }

  gone(worker: Worker): void {
    this.#pending.delete(worker);
  }
}
