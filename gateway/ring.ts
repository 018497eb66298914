// Consistent hashing over peer gateways, so several gateways hold each object once: every
// gateway maps a cache key to the same owner, and adding or removing one peer moves only that
// peer's share. Pure.

import { createHash } from 'node:crypto';

/** Points per peer on the ring: enough that shares stay within a few percent for a handful of peers. */
const POINTS_PER_PEER = 64;

function point(text: string): number {
  return createHash('sha1').update(text).digest().readUInt32BE(0);
}

export class HashRing {
  readonly #points: { at: number; peer: string }[] = [];

  constructor(peers: readonly string[]) {
    for (const peer of peers) {
      for (let i = 0; i < POINTS_PER_PEER; i++) this.#points.push({ at: point(`${peer}#${i}`), peer });
    }
    this.#points.sort((a, b) => a.at - b.at || a.peer.localeCompare(b.peer));
  }

  /** The peer owning `key`, or undefined for an empty ring. */
  owner(key: string): string | undefined {
    const pts = this.#points;
    if (pts.length === 0) return undefined;
    const h = point(key);
    let lo = 0;
    let hi = pts.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (pts[mid]!.at < h) lo = mid + 1;
      else hi = mid;
    }
    return pts[lo === pts.length ? 0 : lo]!.peer;
  }
}
