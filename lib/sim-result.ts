// What one simulated run reports: printed by `estuary coordinator simulate --json` and read by
// `estuary bench coordinator`, which runs the simulator as a child. The one wire format the two
// roles share, so it lives here.

export interface TimelineSample {
  /** Seconds since the trace's start. */
  readonly t: number;
  readonly pending: number;
  readonly home: number;
  readonly cloud: number;
  readonly instances: number;
  /** Dollars so far, compute and egress. */
  readonly compute: number;
  readonly egress: number;
}

export interface SimResult {
  readonly scenario: string;
  readonly policy: string;
  readonly jobs: number;
  readonly finished: number;
  readonly makespanS: number;
  readonly meanWaitS: number;
  readonly p95WaitS: number;
  readonly idleCoreHours: number;
  readonly paidCoreHours: number;
  readonly computeDollars: number;
  readonly egressDollars: number;
  readonly wanBytes: number;
  readonly wanByLink: Readonly<Record<string, number>>;
  readonly dronesStarted: number;
  readonly spotReclaims: number;
  /** Job starts, and how many of them a policy had steered first (the rest started on arrival or unsteered). */
  readonly starts: number;
  readonly steeredStarts: number;
  readonly apiErrors: number;
  readonly ticks: number;
  readonly events: number;
  readonly wallMs: number;
  readonly timeline: readonly TimelineSample[];
}
