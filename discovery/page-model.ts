// What the page says about each cache, decided apart from how it is drawn: its state for triage
// (late, failing, clock drift, not yet checked, healthy, not checked, left), the order (broken first),
// and the readable figures (load as a share of its maximum, sizes, ages, drift with its sign).
// Pure: entries and a clock in, plain values out.

import { type CacheEntry, isVerified } from './registry.ts';

/** Heartbeat interval assumed for agents that do not say theirs (Shoal's and estuary's default). */
export const DEFAULT_INTERVAL_S = 30;
/** A cache is late once this many intervals passed without a heartbeat. */
const LATE_AFTER_INTERVALS = 1.5;

export type State = 'late' | 'failing' | 'drift' | 'pending' | 'healthy' | 'unchecked' | 'left';

/** Triage order: what needs an operator first. A cache that said goodbye needs no one. */
const ORDER: readonly State[] = ['late', 'failing', 'drift', 'pending', 'healthy', 'unchecked', 'left'];

export interface CacheView {
  readonly entry: CacheEntry;
  readonly state: State;
  /** One line: "late: missed 3 heartbeats", "failing verification (2×): timeout". */
  readonly stateText: string;
  readonly missed: number;
  readonly loadPercent: number;
  readonly overloaded: boolean;
}

export function intervalOf(e: CacheEntry): number {
  return e.intervalS ?? DEFAULT_INTERVAL_S;
}

export function view(e: CacheEntry, nowMs: number): CacheView {
  const interval = intervalOf(e);
  const silentS = (nowMs - e.lastActive) / 1000;
  const missed = Math.floor(silentS / interval);
  const loadPercent = e.maxLoad > 0 ? Math.round((e.load / e.maxLoad) * 100) : 0;
  const base = { entry: e, missed, loadPercent, overloaded: e.load > e.maxLoad };
  const v = e.verification;
  const failed = v.state === 'failed' ? `failing verification (${v.failures}×): ${v.error ?? 'no answer'}` : '';
  // A silent agent comes first: a cache whose agent is gone usually fails its check too, and the
  // list, the summary and /metrics must all count it once, as late.
  if (silentS > interval * LATE_AFTER_INTERVALS) {
    const late = `late: missed ${missed} heartbeat${missed === 1 ? '' : 's'} (every ${interval} s)`;
    return { ...base, state: 'late', stateText: failed ? `${late}; ${failed}` : late };
  }
  if (failed) return { ...base, state: 'failing', stateText: failed };
  if (!e.clockInSync) return { ...base, state: 'drift', stateText: `clock drift ${signed(e.skewS)} s` };
  if (v.state === 'pending') return { ...base, state: 'pending', stateText: 'not checked yet' };
  if (v.state === 'off') return { ...base, state: 'unchecked', stateText: 'not checked (--no-verify)' };
  return { ...base, state: 'healthy', stateText: isVerified(e) ? 'healthy, verified' : 'healthy' };
}

export function triage(entries: Iterable<CacheEntry>, nowMs: number): CacheView[] {
  return [...entries]
    .map((e) => view(e, nowMs))
    .sort((a, b) => ORDER.indexOf(a.state) - ORDER.indexOf(b.state) || a.entry.hostname.localeCompare(b.entry.hostname));
}

/** A cache whose agent said goodbye `at`: listed last, for a while, and never offered to clients. */
export function leftView(e: CacheEntry, at: number, nowMs: number): CacheView {
  const loadPercent = e.maxLoad > 0 ? Math.round((e.load / e.maxLoad) * 100) : 0;
  return { entry: e, state: 'left', stateText: `said goodbye ${ago(nowMs - at)}`, missed: 0, loadPercent, overloaded: false };
}

export function counts(views: readonly CacheView[]): Record<State, number> {
  const c: Record<State, number> = { failing: 0, late: 0, drift: 0, pending: 0, healthy: 0, unchecked: 0, left: 0 };
  for (const v of views) c[v.state]++;
  return c;
}

export function signed(n: number): string {
  const r = Math.round(n);
  return r > 0 ? `+${r}` : String(r);
}

/** 1536 → "1.5 KiB"; never "0 MiB" for a small holding. */
export function size(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

export function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s ago`;
  if (s < 7200) return `${Math.round(s / 60)} min ago`;
  return `${Math.round(s / 3600)} h ago`;
}

/**
 * What a cache holds, less the prefix of the object discovery fetches through every cache to
 * verify it (it lands in each cache, and is not data a worker would come for). The test object
 * is given as its URL; a gateway names such prefixes host + first path segment.
 */
export function holdings(e: CacheEntry, testUrl?: string): { name: string; bytes: number }[] {
  if (!e.holds) return [];
  let probe: string | undefined;
  try {
    const u = testUrl ? new URL(testUrl) : undefined;
    const seg = u?.pathname.split('/')[1];
    probe = u ? `${u.host}${seg ? `/${seg}` : ''}` : undefined;
  } catch {
    probe = undefined;
  }
  return [
    ...e.holds.cvmfs.map((c) => ({ name: c.repo, bytes: c.bytes })),
    ...e.holds.prefixes.filter((p) => p.prefix !== probe).map((p) => ({ name: p.prefix, bytes: p.bytes })),
  ].filter((h) => h.bytes > 0);
}
