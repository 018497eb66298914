// What the primary has sent a worker that the worker has not read yet, bounded. Every stored
// object is announced to every other worker with its headers, and node queues what a worker does
// not read (in the IPC pipe's buffer, then in the primary's memory, without limit): a worker frozen
// for an hour under load would take the primary, and so the whole gateway, down with it. Past
// OUTBOX_MAX_BYTES a worker is declared stuck: nothing more is queued for it and it is replaced
// (the replacement rebuilds its index from the disk, so what it was not told is not lost).
//
// A long message (the invalidation of a purge: every key under a prefix, megabytes of them) goes
// out in parts, the next one only once the channel took the one before, so what waits unread is
// one part however many keys there are: counted whole, it would pass the bound by itself and get a
// healthy worker killed. The parts are made as they go from what the sender holds anyway (the
// keys), so they cost no memory while they wait. Messages sent meanwhile wait behind them, in
// order (a worker must not see a new entry's announcement before the invalidation that came
// first), and count towards the bound like anything node holds.

import type { Worker } from 'node:cluster';
import type { ToWorker } from './messages.ts';

/**
 * A worker that reads its channel between requests keeps its backlog within a few messages; 8 MiB
 * is about 700 announcements of objects with 12 KB of headers, or 50,000 invalidations: only a
 * worker that has stopped reading gets there, and the primary's memory stays bounded by it.
 */
export const OUTBOX_MAX_BYTES = 8 * 1024 * 1024;

interface Plain {
  readonly m: ToWorker;
  readonly size: number;
}

interface Lane {
  /** Bytes handed to node for this worker and not yet taken by its channel. */
  inFlight: number;
  /** What waits behind a message in parts: plain messages, and further messages in parts. */
  readonly queue: (Plain | Iterator<ToWorker>)[];
  /** Bytes of the plain messages in `queue`. */
  held: number;
  /** A part is handed to node and not yet taken: the next one waits for it. */
  partOut: boolean;
}

export class Outbox {
  readonly #lanes = new Map<Worker, Lane>();
  /** Workers past the bound: stuck, being replaced; nothing more goes to them. */
  readonly #over = new WeakSet<Worker>();
  readonly #onOverflow: (worker: Worker, bytes: number) => void;
  readonly #max: number;

  constructor(onOverflow: (worker: Worker, bytes: number) => void, max = OUTBOX_MAX_BYTES) {
    this.#onOverflow = onOverflow;
    this.#max = max;
  }

  send(worker: Worker, m: ToWorker): void {
    const lane = this.#lane(worker);
    if (!lane) return;
    // Node sends JSON; its length is what waits in the pipe or in the primary's memory.
    const size = JSON.stringify(m).length;
    if (lane.queue.length === 0) return this.#write(worker, lane, m, size);
    lane.queue.push({ m, size });
    lane.held += size;
    this.#check(worker, lane);
  }

  /** Sends one long message as `parts` (made lazily), in order with everything else sent. */
  sendParts(worker: Worker, parts: Iterable<ToWorker>): void {
    const lane = this.#lane(worker);
    if (!lane) return;
    lane.queue.push(parts[Symbol.iterator]());
    this.#pump(worker, lane);
  }

  /** The largest backlog of any worker now, in bytes. */
  largest(): number {
    let most = 0;
    for (const lane of this.#lanes.values()) most = Math.max(most, lane.inFlight + lane.held);
    return most;
  }

  gone(worker: Worker): void {
    this.#lanes.delete(worker);
  }

  #lane(worker: Worker): Lane | undefined {
    if (this.#over.has(worker) || !worker.isConnected()) return undefined;
    let lane = this.#lanes.get(worker);
    if (!lane) {
      lane = { inFlight: 0, queue: [], held: 0, partOut: false };
      this.#lanes.set(worker, lane);
    }
    return lane;
  }

  /** Hands what waits to node, up to the next part that must wait for the one before. */
  #pump(worker: Worker, lane: Lane): void {
    while (!lane.partOut && lane.queue.length > 0 && this.#lanes.get(worker) === lane) {
      const head = lane.queue[0]!;
      if ('m' in head) {
        lane.queue.shift();
        lane.held -= head.size;
        this.#write(worker, lane, head.m, head.size);
        continue;
      }
      const next = head.next();
      if (next.done) {
        lane.queue.shift();
        continue;
      }
      lane.partOut = true;
      this.#write(worker, lane, next.value, JSON.stringify(next.value).length, () => {
        lane.partOut = false;
        this.#pump(worker, lane);
      });
    }
  }

  #write(worker: Worker, lane: Lane, m: ToWorker, size: number, taken?: () => void): void {
    lane.inFlight += size;
    if (!this.#check(worker, lane)) return;
    worker.send(m, () => {
      // Written to the channel (or failed, the worker gone): no longer held by the primary.
      lane.inFlight -= size;
      taken?.();
    });
  }

  /** False (and the worker declared stuck) once its backlog passes the bound. */
  #check(worker: Worker, lane: Lane): boolean {
    const backlog = lane.inFlight + lane.held;
    if (backlog <= this.#max) return true;
    this.#over.add(worker);
    this.#lanes.delete(worker);
    this.#onOverflow(worker, backlog);
    return false;
  }
}
