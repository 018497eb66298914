// The primary's side of a page or scrape with --workers N: asks every worker past start-up (one
// still starting has counted nothing) for its numbers, waits a bounded time, and sums what came
// back with its own counters and the last counts of the workers that exited (retired.ts), so the
// sums never drop when a worker is replaced. A worker that is stuck (a long synchronous job, a
// frozen cgroup) does not answer; it is named, and the others' numbers and the primary's are
// kept, so nothing can draw "all is well" from a silence.

import type { Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { UpstreamError } from '../upstream.ts';
import type { GatewayView, ProcessReport, ToWorker } from './messages.ts';
import { type Metric, retire } from './retired.ts';

/**
 * How long a worker may take to send its numbers. A worker busy serving answers within
 * milliseconds; one silent this long is stuck. It stays well under Prometheus's default
 * scrape_timeout (10 s), so a scrape gets an answer rather than timing out.
 */
export const GATHER_WAIT_MS = 5000;

interface Round {
  /** By worker id: a worker that exits during the round is counted by its kept totals instead. */
  readonly reports: Map<number, ProcessReport>;
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
  readonly #send: (worker: Worker, m: ToWorker) => void;
  readonly #rounds = new Map<number, Round>();
  /** Each live worker's latest report: what is kept of it when it exits. */
  readonly #last = new Map<number, Metric[]>();
  /** The counters of the workers that exited, as they last reported them, summed. */
  #retired: Metric[] = [];
  /** Pages and scrapes asked for while a round runs share it. */
  #current?: Promise<GatewayView>;
  #nextId = 1;

  constructor(
    workers: ReadonlyMap<number, Worker>,
    own: Registry,
    send: (worker: Worker, m: ToWorker) => void = (w, m) => w.send(m),
    waitMs = GATHER_WAIT_MS,
  ) {
    this.#workers = workers;
    this.#own = own;
    this.#send = send;
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
    // Answers come in order, so the latest is the highest count any sum has shown of this worker.
    if (this.#workers.has(worker)) this.#last.set(worker, report.metrics);
    const r = this.#rounds.get(id);
    if (!r?.waiting.delete(worker)) return;
    r.reports.set(worker, report);
    if (r.waiting.size === 0) r.done();
  }

  /**
   * A worker exited: its last counts join the kept totals, which every round adds, so the rounds
   * running now drop its report (it would count twice) and stop waiting for it. What it counted
   * after its last report was never in any sum, so leaving it out makes nothing go backwards.
   */
  gone(worker: number): void {
    const last = this.#last.get(worker);
    this.#last.delete(worker);
    if (last) this.#retired = retire(this.#retired, last);
    for (const r of this.#rounds.values()) {
      r.reports.delete(worker);
      if (r.waiting.delete(worker) && r.waiting.size === 0) r.done();
    }
  }

  async #round(): Promise<GatewayView> {
    const id = this.#nextId++;
    let done!: () => void;
    const finished = new Promise<void>((resolve) => {
      done = resolve;
    });
    const r: Round = { reports: new Map(), waiting: new Map(), missing: [], done };
    this.#rounds.set(id, r);
    for (const [wid, w] of this.#workers) {
      // One that is exiting cannot answer, but its exit (gone) will stand for its answer.
      r.waiting.set(wid, `worker ${wid} (pid ${w.process.pid ?? '?'})`);
      if (w.isConnected()) this.#send(w, { t: 'collect', id });
    }
    if (r.waiting.size === 0) done();
    const timer = setTimeout(done, this.#waitMs);
    await finished;
    clearTimeout(timer);
    this.#rounds.delete(id);
    for (const name of r.waiting.values()) r.missing.push(`${name} did not answer within ${this.#waitMs / 1000} s`);
    const reports = [...r.reports.values()];
    // Taken in the same tick as the round's end: a worker is in `reports` or in `#retired`, never both.
    const summed = AggregatorRegistry.aggregate([...reports.map((x) => x.metrics), this.#retired]);
    return { text: (await summed.metrics()) + (await this.#own.metrics()), missing: r.missing, ...mergeReports(reports) };
  }
}
