// Peers take turns: every repetition goes A, B, C, D, then the next one again A, B, C, D — never
// one peer's runs back to back. On a shared machine a background job lasts minutes; measured in
// blocks, it lands on whichever peer's block it overlaps and makes that column look slow (a run
// under load once had estuary 1.16× slower than Squid on 4 KiB hits, an idle run 1.30× faster).
// Taking turns spreads it over every column alike, and the spread of each column then shows it.
//
// `takeTurns` (or `oneRound`, for a scenario that nests its own loops) is what scenarios use;
// `interleavingCheck` is how the runner verifies, from the order in which samples actually
// arrived, that every case was measured that way. Pure: no I/O.

export interface TurnOptions<P> {
  readonly signal?: AbortSignal;
  /** Asked at each turn; a peer that failed earlier is skipped for the rest of the run. */
  readonly skip?: (peer: P) => boolean;
}

/** One round: `body(peer)` for every peer in order, the skipped ones left out. */
export async function oneRound<P>(
  peers: readonly P[],
  body: (peer: P) => Promise<void>,
  options: TurnOptions<P> = {},
): Promise<void> {
  for (const peer of peers) {
    if (options.signal?.aborted) return;
    if (options.skip?.(peer)) continue;
    await body(peer);
  }
}

/** Calls `body(peer, run)` for run 1 with every peer in order, then run 2, and so on. */
export async function takeTurns<P>(
  runs: number,
  peers: readonly P[],
  body: (peer: P, run: number) => Promise<void>,
  options: TurnOptions<P> = {},
): Promise<void> {
  for (let run = 1; run <= runs && !options.signal?.aborted; run++)
    await oneRound(peers, (peer) => body(peer, run), options);
}

export interface SampleOrder {
  readonly case: string;
  readonly peer: string;
}

export interface InterleavingCheck {
  /** Cases where order matters: at least two peers, and one of them measured more than once. */
  readonly cases: number;
  /** One line per case measured in blocks: "4 KiB cached: squid's run 2 came before nginx's run 1". */
  readonly problems: string[];
}

/** A case as a scenario returned it: how many samples each peer has. */
export interface MeasuredCase {
  readonly case: string;
  readonly peer: string;
  readonly samples: readonly unknown[];
}

/**
 * Checks samples in arrival order. A case is interleaved when no peer's (k+1)-th sample comes
 * before another peer's k-th — that is, each peer waits for the others before its next
 * repetition. A peer that stops early (it failed) simply has no k-th sample and is not waited for.
 * `measured` is what the scenario returned: a case whose samples were not all reported as they
 * came cannot be put in order, and is flagged rather than trusted.
 */
export function interleavingCheck(
  order: readonly SampleOrder[],
  measured: readonly MeasuredCase[] = order.map((e) => ({ case: e.case, peer: e.peer, samples: [] })),
): InterleavingCheck {
  const arrived = new Map<string, Map<string, number[]>>();
  order.forEach((e, i) => {
    let peers = arrived.get(e.case);
    if (!peers) arrived.set(e.case, (peers = new Map()));
    peers.set(e.peer, [...(peers.get(e.peer) ?? []), i]);
  });
  const counts = new Map<string, Map<string, number>>();
  for (const m of measured) {
    const seen = arrived.get(m.case)?.get(m.peer)?.length ?? 0;
    const peers = counts.get(m.case) ?? new Map<string, number>();
    counts.set(m.case, peers.set(m.peer, Math.max(seen, m.samples.length)));
  }
  let cases = 0;
  const problems: string[] = [];
  for (const [name, peers] of counts) {
    if (peers.size < 2 || [...peers.values()].every((n) => n < 2)) continue;
    cases++;
    const live = arrived.get(name) ?? new Map<string, number[]>();
    const unreported = [...peers].some(([peer, n]) => (live.get(peer)?.length ?? 0) < n);
    const problem = unreported
      ? 'samples were not reported as they were measured, so their order is unknown'
      : firstOutOfTurn([...live.entries()]);
    if (problem) problems.push(`${name}: ${problem}`);
  }
  return { cases, problems };
}

function firstOutOfTurn(positions: readonly (readonly [string, readonly number[]])[]): string | undefined {
  for (const [p, pAt] of positions)
    for (let k = 1; k < pAt.length; k++)
      for (const [q, qAt] of positions) {
        if (q === p || qAt.length < k) continue;
        if (pAt[k]! < qAt[k - 1]!) return `${p}'s run ${k + 1} came before ${q}'s run ${k}`;
      }
  return undefined;
}
