// Gathers what the status page needs at request time: the whole gateway's numbers (with
// --workers N gathered by the primary, naming any worker that did not answer), and what this
// process sees of the cache, its file system and the lock. What the cache holds comes from the
// disk tier's running totals, so a view never walks the cache. The I/O half of the page; model.ts
// decides and page.ts draws.

import { readFile, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import type { Cache } from '../cache/cache.ts';
import type { CacheTotals } from '../cache/totals.ts';
import { CRASH_LOOP } from '../cluster/crash-loop.ts';
import type { GatewayView } from '../cluster/messages.ts';
import { buildStatus, shownUrl, type StatusFacts } from './model.ts';
import { renderStatusPage } from './page.ts';
import { GATEWAY_METRICS } from '../../lib/metric-names.ts';
import { parseProm, total } from './prom-text.ts';

export interface StatusSources {
  readonly cache: Cache;
  readonly view: () => Promise<GatewayView>;
  readonly startedAt: number;
  readonly cacheDir: string;
  readonly diskMax: number;
  /** --mem-cache, over all workers. */
  readonly memMax: number;
  /** --workers when under the supervisor, 0 when this process serves alone. */
  readonly workers: number;
  readonly rings: readonly { readonly name: string; readonly servers: readonly string[] }[];
  readonly allowDest: readonly string[];
  readonly s3Buckets: readonly string[];
}

/** Objects listed by size; the page is for a glance, /estuary/v1/summary has the full lists. */
const LARGEST = 5;
/** Repositories and prefixes listed by size. */
const TOP = 10;

async function freeBytes(dir: string): Promise<number | undefined> {
  try {
    const st = await statfs(dir);
    return Number(st.bavail) * Number(st.bsize);
  } catch {
    return undefined;
  }
}

/** The gateway's lock (gateway/cache/lock.ts) names its holder in gateway.pid beside it. */
async function lockHolder(dir: string): Promise<number | undefined> {
  const pid = Number.parseInt(await readFile(join(dir, 'gateway.pid'), 'utf8').catch(() => ''), 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

function contents(totals: CacheTotals): Pick<StatusFacts, 'top' | 'largest'> {
  return {
    top: [...totals.repos(TOP), ...totals.prefixes(TOP)].sort((a, b) => b.bytes - a.bytes).slice(0, TOP),
    largest: totals.largest(LARGEST).map((o) => ({ url: shownUrl(o.url), bytes: o.bytes })),
  };
}

export async function statusPage(s: StatusSources): Promise<string> {
  await s.cache.disk.listed();
  const [view, free, holder] = await Promise.all([s.view(), freeBytes(s.cacheDir), lockHolder(s.cacheDir)]);
  const { cache } = s;
  const held = cache.disk.held;
  const samples = parseProm(view.text);
  // Each worker has its own memory tier: the page shows their sum, as /metrics does.
  const mem = (tier: string, name: string) => total(samples, name, { tier });
  const facts: StatusFacts = {
    now: Date.now(),
    startedAt: s.startedAt,
    mode: s.rings.length > 0 ? 'reverse' : 'forward',
    workers: s.workers,
    crashLoopLimit: CRASH_LOOP.restarts,
    crashLoopWindowS: CRASH_LOOP.windowMs / 1000,
    cacheDir: s.cacheDir,
    lockHolder: holder,
    memory: { bytes: mem('memory', GATEWAY_METRICS.cacheBytes), objects: mem('memory', GATEWAY_METRICS.cacheObjects), max: s.memMax },
    disk: {
      bytes: held.bytes,
      objects: held.objects,
      unread: held.unread,
      unindexed: cache.disk.unindexed,
      unmapped: cache.mapped.unavailable,
      max: s.diskMax,
      full: view.diskFull,
      free,
      indexBytes: total(samples, GATEWAY_METRICS.diskIndexBytes),
    },
    rings: s.rings,
    allowDest: s.allowDest,
    lastErrors: new Map(view.errors.map(([label, e]) => [label, e.message])),
    downServers: view.down,
    unanswered: view.missing,
    s3Buckets: s.s3Buckets,
    ...contents(cache.disk.totals),
  };
  return renderStatusPage(buildStatus(samples, facts), facts);
}
