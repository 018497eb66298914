// The runner with fake scenarios: it records the order samples arrive in and flags peers that did
// not take turns, and it writes the machine's load average into results.json and report.md.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { takeTurns } from '../../bench/interleave.ts';
import { LiveDisplay } from '../../bench/live.ts';
import { LOCAL } from '../../bench/network-profile.ts';
import type { ScenarioEntry } from '../../bench/registry.ts';
import { runBench } from '../../bench/runner.ts';
import { SampleBook } from '../../bench/samples.ts';
import type { Scenario } from '../../bench/scenario.ts';
import { createLogger } from '../../lib/log.ts';
import { tempDir } from '../helpers/tmp.ts';
import { readResults } from './helpers.ts';

const PEERS = ['A', 'B', 'C', 'D'];

/** A scenario measuring each peer three times, in the order `schedule` visits them. */
function fake(name: string, schedule: (visit: (peer: string, run: number) => Promise<void>) => Promise<void>) {
  const visited: string[] = [];
  const scenario: Scenario = async (ctx) => {
    const book = new SampleBook(ctx);
    await schedule(async (peer, run) => {
      visited.push(`${peer}${run}`);
      book.add({ case: 'work', peer, metric: 'duration', value: 1 + run / 10 });
    });
    return {
      scenario: name,
      settings: {},
      peers: PEERS.map((peer) => ({ peer, status: 'ok' as const })),
      measurements: book.measurements(),
      baseline: 'B',
      method: ['what the time includes'],
      notes: [],
    };
  };
  const entry: ScenarioEntry = {
    name,
    summary: 'fake',
    load: async () => scenario,
    estimateBytes: async () => 0,
  };
  return { entry, visited };
}

async function run(entries: ScenarioEntry[]) {
  const out = join(await tempDir('estuary-runner-'), 'out');
  const outcome = await runBench({
    scenarios: entries,
    quick: false,
    outDir: out,
    workRoot: await tempDir('estuary-runner-work-'),
    installPeers: false,
    network: LOCAL,
    backend: 's3rver',
    extra: {},
    log: createLogger({ level: 'silent', format: 'json', role: 'bench' }),
    display: new LiveDisplay({ isTTY: false, columns: 80, write: () => undefined }),
    signal: new AbortController().signal,
    version: '0.0.0-test',
  });
  return { outcome, results: await readResults(out), report: await readFile(join(out, 'report.md'), 'utf8') };
}

describe('runBench', () => {
  it('records that peers took turns, and flags a scenario that ran them in blocks', async () => {
    const turns = fake('turns', (visit) => takeTurns(3, PEERS, visit));
    const blocks = fake('blocks', async (visit) => {
      for (const peer of PEERS) for (let r = 1; r <= 3; r++) await visit(peer, r);
    });
    const { outcome, results, report } = await run([turns.entry, blocks.entry]);
    // The report is written, but a run with peers out of turn does not pass.
    expect(outcome.exitCode).toBe(1);
    expect(turns.visited.join(' ')).toBe('A1 B1 C1 D1 A2 B2 C2 D2 A3 B3 C3 D3');
    const [t, b] = results.scenarios;
    expect(t!.interleaving).toEqual({ cases: 1, problems: [] });
    expect(b!.interleaving).toEqual({ cases: 1, problems: ["work: A's run 2 came before B's run 1"] });
    expect(report).toContain("**Peers did not take turns** in 1 case(s), so a background job may have landed on one column: blocks: work: A's run 2 came before B's run 1.");
    expect(report).toContain('peers took turns within every run (A, B, C, then again), checked from the order the samples arrived');
    expect(report).toContain('- what the time includes');
  });

  it('writes the load average at start and end into results.json and the report', async () => {
    const { outcome, results, report } = await run([fake('one', (visit) => takeTurns(2, PEERS, visit)).entry]);
    expect(outcome.exitCode).toBe(0);
    for (const load of [results.load!, results.scenarios[0]!.load!]) {
      for (const when of [load.start, load.end]) {
        expect(when).toHaveLength(3);
        for (const l of when) expect(l).toBeGreaterThanOrEqual(0);
      }
    }
    const f = (l: readonly number[]) => l.map((x) => x.toFixed(2)).join(' ');
    expect(report).toContain(
      `| load average | start ${f(results.load!.start)}, end ${f(results.load!.end)} (1, 5, 15 min) on ${results.machine.cpus} cores |`,
    );
    // On this shared machine the load may or may not exceed the cores; the warning follows it.
    expect(report.includes('**Busy machine:**')).toBe(results.load!.start[0]! > results.machine.cpus);
  });
});
