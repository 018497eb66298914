// The coordinator's COBalD controllers against the real ones from PyPI: the same series of
// supply, utilisation, allocation and previous demand goes through cobald's LinearController and
// RelativeSupplyController (regulate(interval) on a stub pool) and through ours, and every
// demand must be identical, with the defaults and with other parameters. Readings sit on the
// thresholds too, where a < against a <= would show.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { controllerSchema } from '../../coordinator/config.ts';
import { makeController, type PoolState } from '../../coordinator/controllers.ts';
import { seeded } from '../../coordinator/sim/heap.ts';
import { IN_CI, required } from '../helpers/services.ts';

const SCRIPT = new URL('../../scripts/ensure-cobald.sh', import.meta.url).pathname;
const DRIVER = new URL('./fixtures/cobald_regulate.py', import.meta.url).pathname;

let python: string | undefined;
beforeAll(async () => {
  try {
    const { stdout } = await promisify(execFile)('bash', [SCRIPT], { timeout: 300_000 });
    python = `${stdout.trim().split('\n').pop()!}/bin/python`;
  } catch (err) {
    const why = String((err as { stderr?: string }).stderr ?? err).trim().split('\n').pop()!;
    if (IN_CI) throw new Error(`CI=true and cobald could not be installed: ${why}`, { cause: err });
    required('cobald (PyPI)', false, `bash scripts/ensure-cobald.sh (${why})`);
  }
}, 320_000);

interface Step {
  supply: number;
  utilisation: number;
  allocation: number;
  demand: number;
  interval: number;
}

function series(seed: number, n = 300): Step[] {
  const r = seeded(seed);
  const edge = [0, 0.25, 0.5, 0.75, 1];
  const level = () => (r() < 0.3 ? edge[Math.floor(r() * edge.length)]! : r());
  return Array.from({ length: n }, () => ({
    supply: Math.floor(r() * 200),
    utilisation: level(),
    allocation: level(),
    demand: Math.round(r() * 400 * 100) / 100,
    interval: [1, 10, 30, 60][Math.floor(r() * 4)]!,
  }));
}

async function cobald(controller: string, params: Record<string, number>, steps: Step[]): Promise<number[]> {
  const child = spawn(python!, [DRIVER], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  child.stdin.end(JSON.stringify({ controller, params, steps }));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`cobald driver failed: ${err}`);
  return out.trim().split('\n').map(Number);
}

function ours(config: unknown, steps: Step[]): number[] {
  const c = makeController(controllerSchema.parse(config));
  return steps.map((s) => {
    const state = { now: 0, intervalMs: s.interval * 1000, demand: s.demand, supply: s.supply, allocation: s.allocation, utilisation: s.utilisation } as PoolState;
    return c(state).demand;
  });
}

const CASES = [
  { name: 'LinearController, defaults', ours: { type: 'linear' }, cobald: ['linear', {}] },
  { name: 'LinearController, rate 2, 0.3/0.8', ours: { type: 'linear', rate: 2, lowUtilisation: 0.3, highAllocation: 0.8 }, cobald: ['linear', { rate: 2, low_utilisation: 0.3, high_allocation: 0.8 }] },
  { name: 'RelativeSupplyController, defaults', ours: { type: 'relative' }, cobald: ['relative', {}] },
  { name: 'RelativeSupplyController, 0.5/1.5 scale, 0.25/0.75', ours: { type: 'relative', lowScale: 0.5, highScale: 1.5, lowUtilisation: 0.25, highAllocation: 0.75 }, cobald: ['relative', { low_scale: 0.5, high_scale: 1.5, low_utilisation: 0.25, high_allocation: 0.75 }] },
] as const;

describe('COBalD controllers against cobald from PyPI', () => {
  for (const [i, c] of CASES.entries())
    it(`${c.name}: the same demand at every step`, async (ctx) => {
      if (!python) return ctx.skip();
      const steps = series(100 + i);
      const theirs = await cobald(c.cobald[0], c.cobald[1], steps);
      expect(theirs).toHaveLength(steps.length);
      expect(ours(c.ours, steps)).toEqual(theirs);
    }, 60_000);
});
