// Messages between the primary process and gateway workers (node:cluster IPC). The primary owns
// one thing: which worker fetches each key right now. Workers tell it about their fills; it
// relays those events to the workers following the fill, and replicates stored, revalidated,
// invalidated and evicted entries so every worker's disk index describes the same files.

import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import type { EntryMeta } from '../cache/entry.ts';
import type { FillEvent } from '../cache/fill.ts';
import type { UpstreamError } from '../upstream.ts';

/**
 * How long a serving worker may stay silent on an invalidation (neither confirm it nor report a
 * part of it done) before the primary takes it as stuck and restarts it: the same 5 s after which
 * a scrape names a worker as stuck (gather.ts). A worker's event loop answers in milliseconds; a
 * false alarm on a busy machine would cost a restart, so the bound is generous.
 */
export const INVALIDATE_CONFIRM_MS = 5000;
/**
 * How long a worker waits for word from the primary on its invalidation (the confirmation, or
 * that a part progressed): the primary's own wait, a restart, and slack.
 */
export const INVALIDATE_PRIMARY_WAIT_MS = INVALIDATE_CONFIRM_MS + 2000;

/** What one process alone knows for the status page: its metrics and its view of the upstreams. */
export interface ProcessReport {
  readonly metrics: MetricObjectWithValues<MetricValue<string>>[];
  readonly errors: readonly (readonly [string, UpstreamError])[];
  /** Ring servers it tries last after a recent failure. */
  readonly down: readonly string[];
  readonly diskFull: boolean;
}

/**
 * The numbers of the whole gateway as gathered for one page or scrape: the Prometheus text of
 * every process that answered (summed) and the primary's own, and who did not answer in time.
 */
export interface GatewayView {
  readonly text: string;
  /** Processes whose numbers are missing from `text`, each with why ("worker 2 (pid 81) did not answer within 5 s"). */
  readonly missing: readonly string[];
  readonly errors: readonly (readonly [string, UpstreamError])[];
  readonly down: readonly string[];
  readonly diskFull: boolean;
}

export type ToPrimary =
  | { readonly t: 'ready'; readonly port: number }
  /** The worker could not start (a port in use, say): the primary ends with this error. */
  | { readonly t: 'start-failed'; readonly code?: string; readonly message: string; readonly exitCode: number }
  | { readonly t: 'claim'; readonly id: number; readonly key: string }
  /** An event of the fill this worker leads; `id` is the id of the claim that made it leader. */
  | { readonly t: 'fill'; readonly id: number; readonly key: string; readonly ev: FillEvent }
  /** A write dropped `keys`: the primary answers `invalidated` with this id once no worker has them. */
  | { readonly t: 'invalidate'; readonly id: number; readonly keys: readonly string[] }
  /**
   * The answer to the primary's `invalidate`: this worker dropped the keys. With `more`, it only
   * finished one part of a long one (and is alive); the answer without it follows the last part.
   */
  | { readonly t: 'invalidated'; readonly id: number; readonly more?: boolean }
  | { readonly t: 'evicted'; readonly key: string; readonly path: string }
  | { readonly t: 'metrics'; readonly id: number }
  /** The answer to the primary's `collect`. */
  | { readonly t: 'collected'; readonly id: number; readonly report: ProcessReport };

export type ToWorker =
  | {
      readonly t: 'claimed';
      readonly id: number;
      readonly role: 'leader' | 'join';
      /** For a joiner: the fill it follows, named in the `fill` events relayed to it. */
      readonly fill?: string;
      /** For a joiner: the fill's streaming event and bytes written so far, if it got that far. */
      readonly streaming?: FillEvent;
      readonly written?: number;
    }
  | { readonly t: 'fill'; readonly fill: string; readonly ev: FillEvent }
  | { readonly t: 'put'; readonly meta: EntryMeta; readonly path: string }
  | { readonly t: 'meta'; readonly meta: EntryMeta }
  /**
   * Drop `keys` and answer `invalidated` with this id (a write on another worker). With `more`,
   * further parts of the same invalidation follow (invalidationParts): answer after the last.
   */
  | { readonly t: 'invalidate'; readonly id: number; readonly keys: readonly string[]; readonly more?: boolean }
  /**
   * Every worker dropped the keys of this worker's `invalidate` (or was restarted). With `more`,
   * only word that the invalidation progresses: a worker finished a part of it.
   */
  | { readonly t: 'invalidated'; readonly id: number; readonly more?: boolean }
  | { readonly t: 'evicted'; readonly key: string; readonly path: string }
  | { readonly t: 'metrics'; readonly id: number; readonly view: GatewayView }
  /** Send your ProcessReport (for a page or scrape another worker was asked for). */
  | { readonly t: 'collect'; readonly id: number }
  | { readonly t: 'stop' }
  /** SIGHUP reached the primary: reopen the access log (logrotate). */
  | { readonly t: 'reopen-logs' }
  /** You now report the disk gauges (the worker that did has gone). */
  | { readonly t: 'disk-metrics' };

export function isToPrimary(m: unknown): m is ToPrimary {
  return typeof m === 'object' && m !== null && typeof (m as { t?: unknown }).t === 'string';
}

export const isToWorker = isToPrimary as unknown as (m: unknown) => m is ToWorker;

/**
 * How many bytes of keys one part of a relayed invalidation holds at most: a worker parses and
 * applies one part between requests in about a millisecond, and a few parts in flight stay far
 * below the outbox's bound (outbox.ts) whatever the purge.
 */
export const INVALIDATE_PART_BYTES = 256 * 1024;

/**
 * The worker's `invalidate` for `keys`, in parts of about `maxBytes` of keys each (at least one
 * key a part), made as they are taken: the keys are not copied ahead.
 */
export function* invalidationParts(
  id: number,
  keys: readonly string[],
  maxBytes = INVALIDATE_PART_BYTES,
): Generator<Extract<ToWorker, { t: 'invalidate' }>> {
  let start = 0;
  for (;;) {
    let end = start;
    let bytes = 0;
    // A key takes its length plus its quotes and comma in the JSON; a part holds at least one.
    while (end < keys.length && (end === start || bytes + keys[end]!.length + 3 <= maxBytes)) {
      bytes += keys[end]!.length + 3;
      end++;
    }
    if (end >= keys.length) {
      yield { t: 'invalidate', id, keys: start === 0 ? keys : keys.slice(start) };
      return;
    }
    yield { t: 'invalidate', id, keys: keys.slice(start, end), more: true };
    start = end;
  }
}
