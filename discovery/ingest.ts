// From an AMQP message to a registry change: admission, flood guard, capacity, goodbye, apply.
// No network: the consumer feeds it, and tests feed it directly. Dropped messages are counted by
// reason and logged with the cache they name, throttled per cache (drop-log.ts).

import type { Logger } from '../lib/log.ts';
import {
  ABSURD_SKEW_S,
  admit,
  type AdmissionPolicy,
  type DropReason,
  FloodGuard,
  type IncomingMessage,
  orderingTimestamp,
} from './admission.ts';
import { DropLog, peekSource } from './drop-log.ts';
import type { Departures } from './departures.ts';
import type { Rejections } from './rejections.ts';
import type { Locator } from './locator.ts';
import type { CacheEntry, Registry } from './registry.ts';

/**
 * Goodbyes remembered at once. A tombstone only has to outlive the replay window (a message older
 * than ABSURD_SKEW_S is refused anyway); beyond this many the oldest go first, so a flood of
 * goodbyes costs bounded memory.
 */
const MAX_TOMBSTONES = 100_000;

export interface IngestOptions {
  readonly registry: Registry;
  readonly locator: Locator;
  readonly policy: AdmissionPolicy;
  readonly verify: boolean;
  readonly log: Logger;
  readonly flood?: FloodGuard;
  readonly count: (result: 'accepted' | 'goodbye' | DropReason) => void;
  /** A cache that is new, or moved, and needs verifying. */
  readonly onFresh?: (e: CacheEntry) => void;
  readonly now?: () => number;
  /** Where refused heartbeats are remembered for the page. */
  readonly rejections?: Rejections;
  /** Where caches that said goodbye are remembered for the page. */
  readonly departures?: Departures;
}

export type IngestResult = 'accepted' | 'goodbye' | DropReason;

export function createIngest(o: IngestOptions): (msg: IncomingMessage) => IngestResult {
  const flood = o.flood ?? new FloodGuard();
  const now = o.now ?? Date.now;
  const dropLog = new DropLog();
  // uuid -> the goodbye's own timestamp (agent clock, s) and when it arrived (ours, ms).
  const tombstones = new Map<string, { timestamp: number; at: number }>();
  const tombstoned = (uuid: string, timestamp: number, t: number): number | undefined => {
    const stone = tombstones.get(uuid);
    if (!stone) return undefined;
    if (t - stone.at > ABSURD_SKEW_S * 1000) {
      tombstones.delete(uuid);
      return undefined;
    }
    return timestamp <= stone.timestamp ? stone.timestamp : undefined;
  };

  const drop = (
    reason: DropReason,
    detail: string,
    msg: IncomingMessage,
    t: number,
    known?: { uuid?: string; hostname?: string },
  ): DropReason => {
    o.count(reason);
    const src = { ...(known?.hostname ? {} : peekSource(msg.body)), ...known, sender: msg.sender };
    o.rejections?.note(src, reason, detail, t);
    const shown = dropLog.admit(src, reason, t);
    if (shown) o.log.warn({ reason, detail, ...src, ...shown }, 'heartbeat dropped');
    return reason;
  };

  return (msg) => {
    const t = now();
    const a = admit(msg, o.policy, t);
    if (!a.ok) return drop(a.reason, a.detail, msg, t, a.uuid ? { uuid: a.uuid } : undefined);
    const hb = a.heartbeat;
    const who = { uuid: hb.uuid, hostname: hb.hostname };
    // A cache registered with a key can only be refreshed or removed with the same key: otherwise
    // an unsigned Shoal-compatibility message, or another site's key, could take over its uuid and
    // point clients elsewhere (or say goodbye on its behalf). Checked before the flood guard so such
    // messages cannot use up the real cache's rate budget either.
    const known = o.registry.get(hb.uuid);
    if (known?.auth === 'signed' && (a.auth !== 'signed' || a.keyId !== known.keyId)) {
      const detail = `uuid registered with key ${known.keyId}, message ${a.keyId ?? 'unsigned'}`;
      return drop('impersonation', detail, msg, t, who);
    }
    // A signed message older than the one already applied is a replay (or a very late
    // redelivery): applying it would roll the cache back to an earlier address or load.
    const order = orderingTimestamp(hb.timestamp, t);
    if (known?.auth === 'signed' && order < known.agentTimestamp) {
      const detail = `timestamp ${hb.timestamp} is older than the last accepted ${known.agentTimestamp}`;
      return drop('replay', detail, msg, t, who);
    }
    // A heartbeat from before the cache's goodbye is a replay (or a late redelivery): it would
    // bring back a cache that has gone. A restarted agent's heartbeats are newer and pass.
    const goneAt = tombstoned(hb.uuid, order, t);
    if (goneAt !== undefined) {
      return drop('replay', `timestamp ${hb.timestamp} is not after its goodbye at ${goneAt}`, msg, t, who);
    }
    if (!flood.allow(hb.uuid, t))
      return drop('flood', 'more heartbeats than the rate limit allows', msg, t, who);
    if (a.goodbye) {
      tombstones.delete(hb.uuid);
      tombstones.set(hb.uuid, { timestamp: order, at: t });
      if (tombstones.size > MAX_TOMBSTONES) tombstones.delete(tombstones.keys().next().value!);
      const leaving = o.registry.get(hb.uuid);
      if (leaving && o.registry.remove(hb.uuid)) {
        o.departures?.note(leaving, t);
        o.log.info({ uuid: hb.uuid, hostname: hb.hostname }, 'cache said goodbye');
      }
      o.count('goodbye');
      return 'goodbye';
    }
    if (o.registry.isFull(hb.uuid))
      return drop('registry-full', 'registry holds --max-caches caches', msg, t, who);
    const { entry, fresh } = o.registry.apply(
      hb,
      { nowMs: t, auth: a.auth, keyId: a.keyId, skewS: a.skewS, verify: o.verify },
      (h) => o.locator.cache(h),
    );
    if (fresh) {
      o.departures?.forget(entry.id);
      o.log.info(
        {
          uuid: entry.id,
          hostname: entry.hostname,
          auth: entry.auth,
          site: entry.site,
          location: entry.location?.source,
        },
        'cache registered',
      );
      o.onFresh?.(entry);
    }
    if (!entry.clockInSync && fresh)
      o.log.warn({ uuid: entry.id, skewS: a.skewS }, 'cache clock drifts from ours');
    o.count('accepted');
    return 'accepted';
  };
}

/** Calls `sweep` every `everyMs`, pruning the flood guard alongside. */
export function startSweeper(
  registry: Registry,
  flood: FloodGuard,
  expiryMs: number,
  everyMs: number,
  log: Logger,
): () => void {
  const timer = setInterval(() => {
    const t = Date.now();
    const gone = registry.sweep(t, expiryMs);
    flood.prune(t);
    if (gone.length > 0) log.info({ expired: gone.length }, 'caches expired');
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
