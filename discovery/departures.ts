// Caches whose agent said goodbye, kept for the page a while after they left the registry: a cache
// that vanishes from the list between two refreshes looks like a fault, one marked "left 2 min ago"
// does not. Never consulted for answers to clients. Bounded; pure apart from its own state.

import type { CacheEntry } from './registry.ts';

/** How long a departed cache stays on the page: several page refreshes (30 s), then it is history. */
export const LEFT_SHOWN_MS = 10 * 60_000;
/** Departures remembered at once; a wave of goodbyes pushes out the oldest. */
const MAX_REMEMBERED = 200;

export interface Departure {
  readonly entry: CacheEntry;
  readonly at: number;
}

export class Departures {
  readonly #by = new Map<string, Departure>();

  note(entry: CacheEntry, at: number): void {
    this.#by.delete(entry.id);
    this.#by.set(entry.id, { entry, at });
    if (this.#by.size > MAX_REMEMBERED) this.#by.delete(this.#by.keys().next().value!);
  }

  /** The cache is back (a newer heartbeat): it is listed from the registry again. */
  forget(id: string): void {
    this.#by.delete(id);
  }

  /** Departures within `windowMs` of `now`, most recent first. */
  recent(now: number, windowMs = LEFT_SHOWN_MS): Departure[] {
    return [...this.#by.values()].filter((d) => now - d.at <= windowMs).reverse();
  }
}
