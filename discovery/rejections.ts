// The heartbeats discovery refused lately, by sender and reason, for the page: "why isn't my
// cache listed?" must have an answer an operator can see without reading logs. Bounded: the most
// recently seen senders only. Pure apart from its own state.

import type { DropSource } from './drop-log.ts';

/** Senders remembered; a flood of made-up uuids pushes out the oldest, never grows memory. */
const MAX_REMEMBERED = 100;

export interface Rejection {
  readonly reason: string;
  readonly detail: string;
  readonly uuid?: string;
  readonly hostname?: string;
  readonly sender?: string;
  readonly count: number;
  readonly firstAt: number;
  readonly lastAt: number;
}

export class Rejections {
  readonly #by = new Map<string, Rejection>();

  note(src: DropSource, reason: string, detail: string, t: number): void {
    const key = `${reason}\u0000${src.uuid ?? ''}\u0000${src.hostname ?? ''}\u0000${src.sender ?? ''}`;
    const old = this.#by.get(key);
    this.#by.delete(key);
    this.#by.set(key, {
      reason,
      detail,
      uuid: src.uuid,
      hostname: src.hostname,
      sender: src.sender,
      count: (old?.count ?? 0) + 1,
      firstAt: old?.firstAt ?? t,
      lastAt: t,
    });
    if (this.#by.size > MAX_REMEMBERED) this.#by.delete(this.#by.keys().next().value!);
  }

  /** Most recent first, those seen within `windowMs` of `now`. */
  recent(now: number, windowMs: number): Rejection[] {
    return [...this.#by.values()].filter((r) => now - r.lastAt <= windowMs).reverse();
  }
}
