// Messages between the primary process and gateway workers (node:cluster IPC). The primary owns
// one thing: which worker fetches each key right now. Workers tell it about their fills; it
// relays those events to the workers following the fill, and replicates stored, revalidated,
// invalidated and evicted entries so every worker's disk index describes the same files.

import type { EntryMeta } from '../cache/entry.ts';
import type { FillEvent } from '../cache/fill.ts';

export type ToPrimary =
  | { readonly t: 'ready'; readonly port: number }
  /** The worker could not start (a port in use, say): the primary ends with this error. */
  | { readonly t: 'start-failed'; readonly code?: string; readonly message: string; readonly exitCode: number }
  | { readonly t: 'claim'; readonly id: number; readonly key: string }
  | { readonly t: 'fill'; readonly key: string; readonly ev: FillEvent }
  | { readonly t: 'invalidate'; readonly key: string }
  | { readonly t: 'evicted'; readonly key: string; readonly path: string }
  | { readonly t: 'metrics'; readonly id: number };

export type ToWorker =
  | {
      readonly t: 'claimed';
      readonly id: number;
      readonly role: 'leader' | 'join';
      /** For a joiner: the fill's streaming event and bytes written so far, if it got that far. */
      readonly streaming?: FillEvent;
      readonly written?: number;
    }
  | { readonly t: 'fill'; readonly key: string; readonly ev: FillEvent }
  | { readonly t: 'put'; readonly meta: EntryMeta; readonly path: string }
  | { readonly t: 'meta'; readonly meta: EntryMeta }
  | { readonly t: 'invalidate'; readonly key: string }
  | { readonly t: 'evicted'; readonly key: string; readonly path: string }
  | { readonly t: 'metrics'; readonly id: number; readonly text: string }
  | { readonly t: 'stop' }
  /** SIGHUP reached the primary: reopen the access log (logrotate). */
  | { readonly t: 'reopen-logs' }
  /** You now report the disk gauges (the worker that did has gone). */
  | { readonly t: 'disk-metrics' };

export function isToPrimary(m: unknown): m is ToPrimary {
  return typeof m === 'object' && m !== null && typeof (m as { t?: unknown }).t === 'string';
}

export const isToWorker = isToPrimary as unknown as (m: unknown) => m is ToWorker;
