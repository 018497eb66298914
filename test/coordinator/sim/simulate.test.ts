// The simulator runs the real coordinator against simulated sites and Slurm: these check the
// simulated world's rules (home first, caches, egress, reclaims, API errors, capacity), that
// time jumps from event to event, and that a run is deterministic.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Logger } from '../../../lib/log.ts';
import { controllerSchema } from '../../../coordinator/config.ts';
import { policies, simulate } from '../../../coordinator/sim/run.ts';
import { parseScenario } from '../../../coordinator/sim/scenario.ts';

const jobs = (n: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify(Array.from({ length: n }, (_, i) => ({ id: i + 1, submit: 0, runtime: 600, inputs: [{ url: 's3://d/f1', bytes: 1e9 }], ...extra })));

function scenario(site: string, trace = jobs(6)) {
  const text = `name: tiny
trace: t.json
home: { nodes: 1, cores: 2 }
interval: 30s
idle-time: 2m
machine-types: { m: { cores: 2, memory: 4GiB } }
storage: { store: { urls: ["s3://d/"], egress-per-gb: 0.1 } }
sites:
  c:
    quota: 2
    machine-types: [m]
    cost-per-core-hour: 0.1
${site}`;
  return parseScenario(text, '/tiny/s.yaml', () => trace);
}
const threshold = controllerSchema.parse({ type: 'threshold' });

describe('simulate', () => {
  it('fills the home slots first, bursts for the rest, fetches each input once per site and bills it', async () => {
    const r = await simulate(scenario('    sim: { boot: 60s }\n'), threshold);
    expect(r.finished).toBe(6);
    expect(r.dronesStarted).toBeGreaterThanOrEqual(1);
    expect(r.dronesStarted).toBeLessThanOrEqual(2);
    expect(r.timeline[0]).toMatchObject({ home: 2, pending: 4 });
    // One GB into the home cache, one into the site's: six jobs, two transfers.
    expect(r.wanBytes).toBe(2e9);
    expect(r.egressDollars).toBeCloseTo(0.2, 9);
    expect(r.computeDollars).toBeCloseTo(r.paidCoreHours * 0.1, 9);
    expect(r.idleCoreHours).toBeGreaterThan(0);
    expect(r.idleCoreHours).toBeLessThan(r.paidCoreHours);
    // 8 s for 1 GB at the default 1 Gbit/s, then 10 min of work: the first wave's makespan.
    expect(r.makespanS).toBeGreaterThanOrEqual(608);
    expect(r.p95WaitS).toBeGreaterThanOrEqual(60);
  });

  it('jumps from event to event: an hour of quiet costs no ticks beyond the control loop', async () => {
    const trace = JSON.stringify([{ submit: 0, runtime: 60 }, { submit: 36_000, runtime: 60 }]);
    const r = await simulate(scenario('    sim: { boot: 60s }\n', trace), threshold);
    expect(r.finished).toBe(2);
    // Both jobs run at home; the loop ticks every 30 s over 10 h, and nothing smaller happens.
    expect(r.ticks).toBeLessThanOrEqual(36_060 / 30 + 2);
    expect(r.events).toBe(2);
    expect(r.dronesStarted).toBe(0);
  });

  it('requeues the jobs of reclaimed spot drones and bills spot at the spot price', async () => {
    const s = scenario('    spot-per-core-hour: 0.02\n    sim: { boot: 30s, spot: true, spot-interruption-rate: 4 }\n', jobs(20));
    const r = await simulate(s, threshold, { seed: 7 });
    expect(r.spotReclaims).toBeGreaterThan(0);
    expect(r.finished).toBe(20);
    expect(r.computeDollars).toBeCloseTo(r.paidCoreHours * 0.02, 9);
  });

  it('keeps going through API errors and never runs past the site capacity', async () => {
    const r = await simulate(scenario('    sim: { boot: 30s, api-error-rate: 0.3, capacity: 1 }\n', jobs(12)), threshold);
    expect(r.apiErrors).toBeGreaterThan(0);
    expect(r.finished).toBe(12);
    expect(Math.max(...r.timeline.map((p) => p.instances))).toBeLessThanOrEqual(1);
  });

  it('is deterministic for a seed', async () => {
    const s = scenario('    sim: { boot: 60s, boot-jitter: 60s, api-error-rate: 0.1 }\n', jobs(10));
    const strip = ({ wallMs, ...rest }: Awaited<ReturnType<typeof simulate>>) => (void wallMs, rest);
    expect(strip(await simulate(s, threshold, { seed: 3 }))).toEqual(strip(await simulate(s, threshold, { seed: 3 })));
  });

  it('runs every policy the config accepts, each finishing the tiny scenario', async () => {
    const names = policies().map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining(['lsf-rc', 'cobald-linear', 'cobald-relative', 'glideinwms']));
    for (const p of policies()) {
      const r = await simulate(scenario('    sim: { boot: 60s }\n'), p.controller);
      // RelativeSupply scales supply, so from zero drones it never starts one: home runs it all.
      expect(r.finished, p.name).toBe(6);
      if (p.name === 'cobald-relative') expect(r.dronesStarted).toBe(0);
    }
  });
});

describe('simulate: run times learned as from sacct', () => {
  it('replays the estimator over the jobs that finished: later decisions say they learned', async () => {
    // Ten-minute jobs with a four-hour limit, a wave every half hour: the first waves finish
    // before the later ones are placed, and those are timed by what the first ones took.
    const trace = JSON.stringify(Array.from({ length: 24 }, (_, i) => ({ id: i + 1, submit: Math.floor(i / 6) * 1800, runtime: 600, timeLimit: 14_400, user: 'ana', name: 'reco' })));
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (s: string) => lines.push(s) }) as unknown as Logger;
    const r = await simulate(scenario('    sim: { boot: 60s }\n', trace), controllerSchema.parse({ type: 'estuary' }), { log });
    expect(r.finished).toBe(24);
    const learning = lines.map((l) => JSON.parse(l) as { msg: string; source?: string; jobs?: number }).find((l) => l.msg === 'learning run times from finished jobs');
    expect(learning).toMatchObject({ source: 'simulated accounting' });
    const starts = lines.map((l) => JSON.parse(l) as { msg: string; reason?: { runEstimate?: string; runS?: number } }).filter((l) => l.msg === 'starting drone');
    expect(starts[0]!.reason).toMatchObject({ runEstimate: 'time limit', runS: 14_400 });
    const learned = starts.find((s) => s.reason?.runEstimate?.startsWith('learned from'));
    expect(learned, JSON.stringify(starts.map((s) => s.reason?.runEstimate))).toBeDefined();
    // A run is start to end as Slurm accounts it: 10 minutes of work after a 1 GB read.
    expect(learned!.reason!.runS).toBeGreaterThanOrEqual(600);
    expect(learned!.reason!.runS).toBeLessThan(700);
  });
});
