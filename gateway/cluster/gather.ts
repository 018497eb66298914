// The primary's side of a page or scrape with --workers N: asks every worker past start-up (one
// still starting has counted nothing) for its numbers, waits a bounded time, and sums what came back with its own counters. A worker that is stuck
// (a long synchronous job, a frozen cgroup) or dying does not answer; it is named, and the
// others' numbers and the primary's are kept, so nothing can draw "all is well" from a silence.

import type { Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { UpstreamError } from '../upstream.ts';
import type { GatewayView, ProcessReport, ToWorker } from './messages.ts';

/**
 * How long a worker may take to send its numbers. A worker busy serving answers within
 * milliseconds; one silent this long is stuck. It stays well under Prometheus's default
 * scrape_timeout (10 s), so a scrape gets an answer rather than timing out.
 */
export const GATHER_WAIT_MS = 5000;

interface Round {
  readonly reports: ProcessReport[];
  /** Workers asked that have not answered yet: id -> how to name them. */
  readonly waiting: Map<number, string>;
  readonly missing: string[];
  done(): void;
}

/** The cluster's view from the reports that came back: sums, the latest error per upstream, any full disk. */
export function mergeReports(reports: readonly ProcessReport[]): Omit<GatewayView, 'text' | 'missing'> {
  const errors = new Map<string, UpstreamError>();
  for (const r of reports) {
    for (const [label, e] of r.errors) if ((errors.get(label)?.at ?? -1) < e.at) errors.set(label, e);
  }
  return {
    errors: [...errors],
    down: [...new Set(reports.flatMap((r) => r.down))],
    diskFull: reports.some((r) => r.diskFull),
  };
}

export class Gatherer {
  readonly #workers: ReadonlyMap<number, Worker>;
  readonly #own: Registry;
  readonly #waitMs: number;
  readonly #rounds = new Map<number, Round>();
  /** Pages and scrapes asked for while a round runs share it. */
  #current?: Promise<GatewayView>;
  #nextId = 1;

  constructor(workers: ReadonlyMap<number, Worker>, own: Registry, waitMs = GATHER_WAIT_MS) {
    this.#workers = workers;
    this.#own = own;
    this.#waitMs = waitMs;
  }

  gather(): Promise<GatewayView> {
    this.#current ??= this.#round().finally(() => {
      this.#current = undefined;
    });
    return this.#current;
  }

  /** A worker's answer to a round. */
  answered(worker: number, id: number, report: ProcessReport): void {
    const r = this.#rounds.get(id);
    if (!r?.waiting.delete(worker)) return;
    r.reports.push(report);
    if (r.waiting.size === 0) r.done();
  }

  /** A worker exited: the rounds waiting on it stop waiting. */
  gone(worker: number): void {
    for (const r of this.#rounds.values()) {
      const name = r.waiting.get(worker);
      if (name === undefined) continue;
      r.waiting.delete(worker);
      r.missing.push(`${name} exited before it answered`);
      if (r.waiting.size === 0) r.done();
    }
  }

  async #round(): Promise<GatewayView> {
    const id = this.#nextId++;
    let done!: () => void;
    const finished = new Promise<void>((resolve) => {
      done = resolve;
    });
    const r: Round = { reports: [], waiting: new Map(), missing: [], done };
    this.#rounds.set(id, r);
    for (const [wid, w] of this.#workers) {
      const name = `worker ${wid} (pid ${w.process.pid ?? '?'})`;
      if (!w.isConnected()) {
        r.missing.push(`${name} is exiting`);
        continue;
      }
      r.waiting.set(wid, name);
      w.send({ t: 'collect', id } satisfies ToWorker);
    }
    if (r.waiting.size === 0) done();
    const timer = setTimeout(done, this.#waitMs);
    await finished;
    clearTimeout(timer);
    this.#rounds.delete(id);
    for (const name of r.waiting.values()) r.missing.push(`${name} did not answer within ${this.#waitMs / 1000} s`);
    const summed = await AggregatorRegistry.aggregate(r.reports.map((x) => x.metrics)).metrics();
    return { text: summed + (await this.#own.metrics()), missing: r.missing, ...mergeReports(r.reports) };
  }
}
