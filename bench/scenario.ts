// The contract between `estuary bench` and each benchmark scenario (fuse, gateway, discovery).
// A scenario starts its peers, measures, stops everything it started (also on failure), and
// returns raw samples; the runner computes medians, spreads and ratios and writes the reports.

import type { Logger } from '../lib/log.ts';
import type { MetricName } from './metrics.ts';
import type { Series } from './report/lines.ts';

export interface BenchContext {
  /** Reduced sizes and repetitions so every scenario finishes within the CI smoke budget. */
  readonly quick: boolean;
  /** A scratch directory owned by this run; removed by the runner afterwards. */
  readonly workDir: string;
  /** Install missing Debian peers (squid, nginx, varnish, s3fs, rclone, wrk) before measuring. */
  readonly installPeers: boolean;
  readonly log: Logger;
  /** Aborted on SIGINT/SIGTERM: stop measuring, clean up, return what was measured. */
  readonly signal: AbortSignal;
  /** One short line for the live display ("s3fs: cp up 10×100MB, run 2/3"). */
  progress(line: string): void;
  /** Scenario-specific settings from the command line (network profile, endpoint, ...). */
  readonly settings: Readonly<Record<string, unknown>>;
}

export interface PeerStatus {
  readonly peer: string;
  readonly status: 'ok' | 'skipped' | 'failed';
  /** Why a peer was skipped or failed, one line ("s3fs not on PATH; --install-peers installs it"). */
  readonly reason?: string;
  readonly version?: string;
}

export interface Measurement {
  /** The row of a table: "cp up 100×10MB", "4KiB cached, 50 conns". */
  readonly case: string;
  /** The column: the peer measured. */
  readonly peer: string;
  /** What the number is, from the one catalogue that gives its unit and which way is better. */
  readonly metric: MetricName;
  /** One value per repetition, in the order measured. */
  readonly samples: readonly number[];
}

export interface ScenarioResult {
  readonly scenario: string;
  /** Everything needed to reproduce the run: sizes, repetitions, network profile, peer configs. */
  readonly settings: Readonly<Record<string, unknown>>;
  readonly peers: readonly PeerStatus[];
  readonly measurements: readonly Measurement[];
  /** The peer ratios are computed against, e.g. "s3fs" or "squid": the tool being replaced. */
  readonly baseline?: string;
  /**
   * Not a competitor but a yardstick, e.g. the SDK alone moving the same files: drawn as a line
   * in the charts, and ratios to it are shown beside those to the baseline. It is not a bound;
   * a peer may beat it (a mount that overlaps files the SDK moves one after another).
   */
  readonly reference?: string;
  /** How the figures were taken, one sentence each: what a time includes, caches dropped, ... */
  readonly method?: readonly string[];
  readonly notes: readonly string[];
  /** Quantities over time, drawn as line charts (the coordinator's jobs by state, its cost). */
  readonly series?: readonly Series[];
}

export type Scenario = (ctx: BenchContext) => Promise<ScenarioResult>;
