// The clients of the "hostile origins" case, and the memory of a proxy's process tree. Every
// request goes through the proxy in forward mode; every answer is sorted into exactly one kind:
// a 200 whose body ended cleanly with the origin's bytes (checked by SHA-256), a 200 that ended
// cleanly with anything else (wrong bytes: a short body must reach the client as a cut
// connection, never as a clean short answer), a connection cut before the body's end, an error
// status, or no answer within the client's patience (hung).

import { createHash } from 'node:crypto';
import { Agent, request } from 'node:http';
import { treeMemory } from '../proc.ts';
import { BEHAVIOURS, behaviourOf, type HostileOrigin } from './hostile-origin.ts';

export interface Tally {
  exact: number;
  wrong: number;
  /** Cuts where the origin sent a whole body: the proxy lost it. */
  unexpectedCuts: number;
  /** Cuts where the origin itself cut, lied or hung: what a correct proxy does. */
  expectedCuts: number;
  errorStatus: number;
  /** Error statuses where the origin sent a whole body. */
  unexpectedStatus: number;
  hung: number;
  /** First few wrong answers, for the notes. */
  readonly examples: string[];
  /** Every answer that was not exact, by the origin's personality and kind ("length-too-short cut"). */
  readonly odd: Map<string, number>;
}

type Kind = 'exact' | 'wrong' | 'cut' | 'status' | 'hung';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function once(port: number, agent: Agent, target: string, expected: Buffer, patienceMs: number): Promise<{ kind: Kind; got: string }> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (kind: Kind, got = '') => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ kind, got });
    };
    const req = request({ host: '127.0.0.1', port, path: target, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', () => done('cut'));
      res.on('aborted', () => done('cut'));
      res.on('close', () => {
        if (!res.complete) return done('cut');
        const b = Buffer.concat(chunks);
        if (res.statusCode !== 200) return done('status', String(res.statusCode));
        done(b.length === expected.length && sha(b) === sha(expected) ? 'exact' : 'wrong', `${b.length} of ${expected.length} bytes`);
      });
    });
    const timer = setTimeout(() => {
      done('hung');
      req.destroy();
    }, patienceMs);
    req.on('error', () => done('cut'));
    req.end();
  });
}

export interface Drive {
  readonly tally: Tally;
  readonly requests: number;
  readonly seconds: number;
}

/**
 * Asks every path of every origin `asks` times through the proxy (each round in a new shuffled
 * order, so a second ask may meet the first's cached copy or its fill), `clients` at once on
 * kept-alive connections to the proxy.
 */
export async function driveHostile(
  port: number,
  origin: HostileOrigin,
  o: { prefix: string; paths: number; asks: number; clients: number; patienceMs: number; signal: AbortSignal },
): Promise<Drive> {
  const work: [number, number][] = [];
  for (let a = 0; a < o.asks; a++) {
    const round: [number, number][] = [];
    for (let i = 0; i < origin.urls.length; i++) for (let p = 0; p < o.paths; p++) round.push([i, p]);
    for (let k = round.length - 1; k > 0; k--) {
      const j = (k * 7919 + a * 104_729) % (k + 1);
      [round[k], round[j]] = [round[j]!, round[k]!];
    }
    work.push(...round);
  }
  const tally: Tally = { exact: 0, wrong: 0, unexpectedCuts: 0, expectedCuts: 0, errorStatus: 0, unexpectedStatus: 0, hung: 0, examples: [], odd: new Map() };
  const agent = new Agent({ keepAlive: true, maxSockets: o.clients });
  const t0 = performance.now();
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: o.clients }, async () => {
        while (next < work.length && !o.signal.aborted) {
          const [i, p] = work[next++]!;
          const target = `${origin.urls[i]}/o${i}/p${p}${o.prefix}`;
          const r = await once(port, agent, target, origin.body(i, p), o.patienceMs);
          const behaviour = behaviourOf(i);
          const kind = `${behaviour} ${r.kind === 'status' ? r.got : r.kind}`;
          if (r.kind !== 'exact') tally.odd.set(kind, (tally.odd.get(kind) ?? 0) + 1);
          if (r.kind === 'exact') tally.exact++;
          else if (r.kind === 'status') {
            tally.errorStatus++;
            if (BEHAVIOURS[behaviour] === 'complete') tally.unexpectedStatus++;
          }
          else if (r.kind === 'hung') tally.hung++;
          else if (r.kind === 'cut' && BEHAVIOURS[behaviour] === 'cut') tally.expectedCuts++;
          else if (r.kind === 'cut') tally.unexpectedCuts++;
          else {
            tally.wrong++;
            if (tally.examples.length < 5) tally.examples.push(`${behaviour} ${target}: ${r.got}`);
          }
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  return { tally, requests: Math.min(next, work.length), seconds: (performance.now() - t0) / 1000 };
}

/** Samples the tree's RSS every 250 ms until stopped; resolves with the highest sum seen. */
export function watchPeak(pid: number): { stop(): number } {
  let peak = treeMemory(pid).rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, treeMemory(pid).rss);
  }, 250);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, treeMemory(pid).rss);
    },
  };
}
