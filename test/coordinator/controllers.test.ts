// The controllers against the formulas of the tools they reproduce, number by number.

import { describe, expect, it } from 'vitest';
import { controllerSchema } from '../../coordinator/config.ts';
import { makeController, type PoolState, standardise } from '../../coordinator/controllers.ts';
import type { PendingJob } from '../../coordinator/model.ts';

const pool = (p: Partial<PoolState> = {}): PoolState => ({
  now: 1_000_000,
  intervalMs: 1000,
  demand: 8,
  supply: 8,
  allocation: 1,
  utilisation: 1,
  cores: 4,
  maxDrones: 10,
  liveCores: 8,
  waitingCores: 0,
  idleCores: 0,
  busyDrones: 2,
  idleDrones: 0,
  waitingDrones: 0,
  pending: [],
  startedLastMinute: 0,
  ...p,
});
const job = (cpus: number, age = 0): PendingJob => ({
  id: String(Math.random()),
  partition: 'p',
  cpus,
  memoryMb: 100,
  constraints: [],
  inputs: [],
  submittedAt: 1_000_000 - age,
  reason: 'Resources',
});
const ctl = (raw: object) => makeController(controllerSchema.parse(raw));

describe('COBalD LinearController (low_utilisation 0.5, high_allocation 0.5, rate 1/s)', () => {
  const c = ctl({ type: 'linear' });
  it('lowers demand by rate·interval when utilisation is below 0.5', () => {
    expect(c(pool({ utilisation: 0.4, allocation: 0.9, intervalMs: 3000 })).demand).toBe(5);
  });
  it('raises demand when allocation is above 0.5 and utilisation is not low', () => {
    expect(c(pool({ utilisation: 0.6, allocation: 0.6, intervalMs: 2000 })).demand).toBe(10);
  });
  it('keeps demand at exactly the thresholds', () => {
    expect(c(pool({ utilisation: 0.5, allocation: 0.5 })).demand).toBe(8);
  });
  it('grows an empty pool, whose allocation FactoryPool reads as 1', () => {
    const r = c(pool({ supply: 0, demand: 0, allocation: 1, utilisation: 1 }));
    expect(r).toMatchObject({ demand: 1, reason: { rule: 'linear-high-allocation' } });
  });
});

describe('COBalD RelativeSupplyController (0.9 / 1.1 of supply)', () => {
  const c = ctl({ type: 'relative' });
  it('scales supply', () => {
    expect(c(pool({ supply: 10, utilisation: 0.1 })).demand).toBeCloseTo(9);
    expect(c(pool({ supply: 10, utilisation: 0.9, allocation: 0.9 })).demand).toBeCloseTo(11);
    expect(c(pool({ supply: 10, utilisation: 0.5, allocation: 0.5 })).demand).toBe(10);
  });
  it('refuses scales on the wrong side of 1, as COBalD asserts', () => {
    expect(controllerSchema.safeParse({ type: 'relative', lowScale: 1.2 }).success).toBe(false);
  });
});

describe('LSF RC threshold policy', () => {
  it('with no rules given, any pending job raises demand by its cores', () => {
    const r = ctl({ type: 'threshold' })(pool({ pending: [job(2), job(1)] }));
    expect(r).toMatchObject({ demand: 11, reason: { rule: 'threshold-met', pendingCores: 3 } });
  });
  it('waits until N jobs have pended M minutes', () => {
    const c = ctl({ type: 'threshold', rules: [{ jobs: 3, pendingFor: '5m' }] });
    const young = [job(1, 60_000), job(1, 60_000), job(1, 400_000)];
    expect(c(pool({ pending: young })).reason.rule).toBe('threshold-not-met');
    const old = [job(1, 301_000), job(1, 300_000), job(1, 400_000)];
    expect(c(pool({ pending: old })).demand).toBe(11);
  });
  it('counts drones still booting and idle drones as covering pending work', () => {
    const r = ctl({ type: 'threshold' })(pool({ pending: [job(4), job(4)], waitingCores: 4, idleCores: 4, liveCores: 16 }));
    expect(r.demand).toBe(16);
  });
});

describe('GlideinWMS frontend pressure', () => {
  const c = ctl({ type: 'glideinwms' });
  it('asks for a third of the effective idle, plus the old-idle reserve', () => {
    // 30 idle 4-core jobs = 30 drones of demand; none idle, none waiting, 0 running.
    const pending = Array.from({ length: 30 }, () => job(4, 700_000));
    const r = c(pool({ pending, busyDrones: 0, liveCores: 0, supply: 0, maxDrones: 1000 }));
    // min_idle = int(30/3) + min(30//3, 5) = 15; max_run = (30 + 0)·1.15 + 1 = 35.
    expect(r.reason).toMatchObject({ effectiveIdle: 30, minIdle: 15, maxRun: 35 });
    expect(r.demand).toBe(15 * 4);
  });
  it('halves the request above the idle curb and never asks for less than one', () => {
    const pending = [job(4)];
    const r = c(pool({ pending, idleDrones: 5, busyDrones: 0, maxDrones: 100 }));
    // effective idle = max(1-5, 0) = 0: nothing to ask.
    expect(r.reason).toMatchObject({ minIdle: 0 });
    const r2 = c(pool({ pending: Array.from({ length: 12 }, () => job(4)), idleDrones: 5, busyDrones: 0, maxDrones: 100 }));
    // effective 7 → int(7/3)=2 → curb: 1.
    expect(r2.reason).toMatchObject({ effectiveIdle: 7, minIdle: 1 });
  });
  it('asks for nothing once the entry is at max_running', () => {
    const r = c(pool({ pending: [job(4)], busyDrones: 10, maxDrones: 10 }));
    expect(r.reason).toMatchObject({ minIdle: 0 });
  });
});

describe('COBalD Standardiser', () => {
  it('clamps to minimum and maximum, which overrule surplus and backlog', () => {
    expect(standardise(50, 4, { minimum: 0, maximum: 12, granularity: 1 })).toBe(12);
    expect(standardise(-3, 4, { minimum: 2, maximum: 12, granularity: 1 })).toBe(2);
    expect(standardise(20, 4, { minimum: 0, maximum: 100, granularity: 1, surplus: 2 })).toBe(6);
    expect(standardise(0, 10, { minimum: 0, maximum: 100, granularity: 1, backlog: 3 })).toBe(7);
  });
  it('floors to the granularity', () => {
    expect(standardise(7, 0, { minimum: 0, maximum: 100, granularity: 4 })).toBe(4);
  });
});

describe('Slurm power saving (ParallelCluster / slurm-gcp: ResumeRate 0)', () => {
  it('resumes whole nodes for the pending cores not covered by resuming or idle nodes', () => {
    const r = ctl({ type: 'slurm-power' })(pool({ pending: [job(1), job(1), job(1), job(1), job(1)], waitingCores: 0, idleCores: 0 }));
    expect(r.demand).toBe(8 + 8);
    expect(r.reason).toMatchObject({ rule: 'slurm-resume', resume: 2, resumeRate: 0 });
    const covered = ctl({ type: 'slurm-power' })(pool({ pending: [job(1), job(1), job(1)], waitingCores: 4 }));
    expect(covered.demand).toBe(8);
  });
  it('resumes at most ResumeRate nodes a minute when one is set', () => {
    const many = Array.from({ length: 40 }, () => job(1));
    // The last 60 s of resumes use the rate up, whatever the interval.
    expect(ctl({ type: 'slurm-power', 'resume-rate': 4 })(pool({ pending: many, intervalMs: 30_000 })).demand).toBe(8 + 4 * 4);
    expect(ctl({ type: 'slurm-power', 'resume-rate': 4 })(pool({ pending: many, startedLastMinute: 3 })).demand).toBe(8 + 1 * 4);
    expect(ctl({ type: 'slurm-power', 'resume-rate': 4 })(pool({ pending: many, startedLastMinute: 4 })).demand).toBe(8);
    expect(ctl({ type: 'slurm-power' })(pool({ pending: many, intervalMs: 30_000 })).demand).toBe(8 + 10 * 4);
  });
});
