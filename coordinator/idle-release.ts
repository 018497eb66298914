// When estuary's policy lets an idle drone go before the site's idle time: a ski-rental rule.
//
// An idle drone costs its cores for every minute it waits; letting it go and buying a new one
// when work comes costs the new drone's boot, its cores paid while nothing runs on them. Waiting
// exactly as long as a new drone takes to boot, then releasing, never pays more than twice what
// knowing the next job's arrival would have paid (the deterministic break-even of ski rental):
// if the job comes sooner the drone is there, if later the wait cost no more than the boot that
// follows it. A fixed idle time longer than the boot (10 min against 2-3 min) pays up to four or
// five boots of idle cores for every drone at the end of a wave.
//
// Only a drone the plan gives no pending job is let go: one a placed job will use stays. A job
// submitted after the release waits for a new drone's boot, which the rule has already paid for
// by not waiting longer. Pure: numbers in, a verdict out.

/** An available drone with no job on any core, as the plan found it. */
export interface IdleDrone {
  readonly id: string;
  /** Its slot in the pool's plan (slots.ts). */
  readonly idx: number;
  /** How long it has run no job. */
  readonly idleForMs: number;
  /** How long since it was requested (min-lifetime counts from then). */
  readonly ageMs: number;
}

export interface IdleRelease {
  readonly droneId: string;
  readonly idleS: number;
  readonly bootS: number;
}

/**
 * Drones to release now: idle at least the site's boot latency, past their minimum lifetime, and
 * given no job by the plan. The site's idle time still applies as the longest wait (it is the
 * rule when it is the shorter), so this only ever releases sooner.
 */
export function idleReleasesEarly(idle: readonly IdleDrone[], used: ReadonlySet<number>, bootLatencyMs: number, minLifetimeMs: number): IdleRelease[] {
  return idle
    .filter((d) => !used.has(d.idx) && d.idleForMs >= bootLatencyMs && d.ageMs >= minLifetimeMs)
    .map((d) => ({ droneId: d.id, idleS: Math.round(d.idleForMs / 1000), bootS: Math.round(bootLatencyMs / 1000) }));
}
