// From an AMQP message to a registry change: admission, flood guard, capacity, goodbye, apply.
// No network: the consumer feeds it, and tests feed it directly. Dropped messages are counted by
// reason and logged, at most one line per reason every LOG_EVERY_MS, so a flood cannot flood the
// log as well.

import type { Logger } from '../lib/log.ts';
import {
  admit,
  type AdmissionPolicy,
  type DropReason,
  FloodGuard,
  type IncomingMessage,
} from './admission.ts';
import type { Locator } from './locator.ts';
import type { CacheEntry, Registry } from './registry.ts';

const LOG_EVERY_MS = 10_000;

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
}

export type IngestResult = 'accepted' | 'goodbye' | DropReason;

export function createIngest(o: IngestOptions): (msg: IncomingMessage) => IngestResult {
  const flood = o.flood ?? new FloodGuard();
  const now = o.now ?? Date.now;
  const lastLog = new Map<DropReason, { at: number; suppressed: number }>();

  const drop = (reason: DropReason, detail: string, uuid: string | undefined, t: number): DropReason => {
    o.count(reason);
    const l = lastLog.get(reason);
    if (l && t - l.at < LOG_EVERY_MS) {
      l.suppressed++;
      return reason;
    }
    o.log.warn({ reason, detail, uuid, suppressedSinceLast: l?.suppressed ?? 0 }, 'heartbeat dropped');
    lastLog.set(reason, { at: t, suppressed: 0 });
    return reason;
  };

  return (msg) => {
    const t = now();
    const a = admit(msg, o.policy, t);
    if (!a.ok) return drop(a.reason, a.detail, a.uuid, t);
    const hb = a.heartbeat;
    // A cache registered with a key can only be refreshed or removed with the same key: otherwise
    // an unsigned Shoal-compatibility message, or another site's key, could take over its uuid and
    // point clients elsewhere (or say goodbye on its behalf). Checked before the flood guard so such
    // messages cannot use up the real cache's rate budget either.
    const known = o.registry.get(hb.uuid);
    if (known?.auth === 'signed' && (a.auth !== 'signed' || a.keyId !== known.keyId)) {
      const detail = `uuid registered with key ${known.keyId}, message ${a.keyId ?? 'unsigned'}`;
      return drop('impersonation', detail, hb.uuid, t);
    }
    // A signed message older than the one already applied is a replay (or a very late
    // redelivery): applying it would roll the cache back to an earlier address or load.
    if (known?.auth === 'signed' && hb.timestamp < known.agentTimestamp) {
      const detail = `timestamp ${hb.timestamp} is older than the last accepted ${known.agentTimestamp}`;
      return drop('replay', detail, hb.uuid, t);
    }
    if (!flood.allow(hb.uuid, t))
      return drop('flood', 'more heartbeats than the rate limit allows', hb.uuid, t);
    if (a.goodbye) {
      if (o.registry.remove(hb.uuid))
        o.log.info({ uuid: hb.uuid, hostname: hb.hostname }, 'cache said goodbye');
      o.count('goodbye');
      return 'goodbye';
    }
    if (o.registry.isFull(hb.uuid))
      return drop('registry-full', 'registry holds --max-caches caches', hb.uuid, t);
    const { entry, fresh } = o.registry.apply(
      hb,
      { nowMs: t, auth: a.auth, keyId: a.keyId, skewS: a.skewS, verify: o.verify },
      (h) => o.locator.cache(h),
    );
    if (fresh) {
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
