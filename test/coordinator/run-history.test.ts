// Run times learned inside the control loop (in-memory batch system, virtual clock): finished
// jobs read every history-every, the decision's reason naming the estimate it used, and a batch
// system that keeps no history said so on the status page, in the API table and in a metric,
// with decisions falling back to time limits.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { MemoryBatch } from '../../coordinator/batch/memory.ts';
import { VirtualClock } from '../../coordinator/clock.ts';
import { controllerSchema, type EstuaryConfig } from '../../coordinator/config.ts';
import { makeController } from '../../coordinator/controllers.ts';
import { Coordinator } from '../../coordinator/coordinator.ts';
import { DEFAULT_COST } from '../../coordinator/cost.ts';
import { estuaryPlan } from '../../coordinator/estuary-policy.ts';
import { createMetrics } from '../../coordinator/metrics.ts';
import type { PendingJob } from '../../coordinator/model.ts';
import { firstFit } from '../../coordinator/placement.ts';
import { DroneRegistry } from '../../coordinator/registry.ts';
import { MemorySite } from '../../coordinator/sites/memory.ts';
import { renderPage } from '../../coordinator/status/page.ts';
import { buildStatus, statusTable } from '../../coordinator/status/view.ts';

const EVERY = 60_000;

function world() {
  const clock = new VirtualClock(5 * 86_400_000);
  const site = new MemorySite('aws', clock, 3000);
  const batch = new MemoryBatch([site]);
  const registry = DroneRegistry.open(mkdtempSync(join(tmpdir(), 'estuary-history-')));
  const lines: string[] = [];
  const c = controllerSchema.parse({ type: 'estuary' }) as EstuaryConfig;
  const settings = [{ name: 'aws', quota: 4, min: 0, idleTime: 60_000, minLifetime: 0, bootTimeout: 60_000, costPerCoreHour: 0.05, cost: { ...DEFAULT_COST, bootLatencyMs: 3000 }, machineTypes: ['small'] }];
  const coordinator = new Coordinator({
    registry,
    batch,
    sites: new Map([['aws', site]]),
    siteSettings: settings,
    machineTypes: { small: { cores: 2, memory: 4 * 1024 ** 3, features: ['cloud'] } },
    policy: { controllerFor: () => makeController(c), placement: firstFit, plan: (s) => estuaryPlan(s, c) },
    intervalMs: 1000,
    clock,
    log: pino({ level: 'info' }, { write: (s: string) => lines.push(s) }),
    prefix: 'es-',
    markets: true,
    history: { everyMs: EVERY },
  });
  const view = () => buildStatus(registry.all(), settings, () => 2, coordinator.last, clock.now());
  return { clock, batch, coordinator, lines, view, metrics: createMetrics(view) };
}

const pending = (n: number): PendingJob[] =>
  Array.from({ length: n }, (_, i) => ({ id: `j${i}`, partition: 'hybrid', cpus: 1, memoryMb: 100, constraints: [], inputs: [], timeLimitMs: 4 * 3_600_000, user: 'ana', name: 'reco', submittedAt: 0, reason: 'Resources' }));
const finished = (n: number, minutes: number) => Array.from({ length: n }, (_, i) => ({ id: `f${minutes}-${i}`, user: 'ana', partition: 'hybrid', name: 'reco', elapsedMs: minutes * 60_000 }));

describe('run times learned in the control loop', () => {
  it('reads finished jobs every history-every and says in the reason which estimate it used', async () => {
    const w = world();
    w.batch.history = finished(5, 10);
    w.batch.pending = pending(10);
    const first = await w.coordinator.tick();
    const start = first.decisions.find((d) => d.kind === 'start')!;
    expect(start.reason).toMatchObject({ runS: 600, runEstimate: 'learned from 5 jobs' });
    expect(String(start.reason.why)).toMatch(/each runs 10 min \(learned from 5 jobs\)$/);
    expect(first.decisions.filter((d) => d.kind === 'start')).toHaveLength(1); // 10 × 10 min fit one 2-core drone within the hour
    expect(w.view().history).toEqual({ source: 'memory', jobs: 5, skipped: 0, error: null, readAt: w.clock.now(), coveredS: 604_800, narrowedS: null });
    expect(statusTable(w.view())).toContain('run times: learned from 5 finished jobs (memory)');
    // Not read again before history-every has passed; then the new jobs count.
    w.batch.history = finished(5, 10).concat(finished(5, 30));
    w.clock.advance(1000);
    await w.coordinator.tick();
    expect(w.view().history!.jobs).toBe(5);
    w.clock.advance(EVERY);
    await w.coordinator.tick();
    expect(w.view().history!.jobs).toBe(10);
    const metrics = await w.metrics.registry.metrics();
    expect(metrics).toContain('estuary_coordinator_run_time_history_up{source="memory",error=""} 1');
    expect(metrics).toContain('estuary_coordinator_run_time_history_jobs 10');
    expect(metrics).toContain('estuary_coordinator_run_time_history_covered_seconds 604800');
  });

  it('says so on the page, in the table and in a metric when the batch system keeps no history, and uses time limits', async () => {
    const w = world();
    w.batch.history = 'Slurm accounting storage is disabled';
    w.batch.pending = pending(2);
    const first = await w.coordinator.tick();
    expect(first.decisions.find((d) => d.kind === 'start')!.reason).toMatchObject({ runS: 14_400, runEstimate: 'time limit' });
    const v = w.view();
    expect(v.history).toMatchObject({ source: null, jobs: 0, error: 'Slurm accounting storage is disabled' });
    expect(statusTable(v)).toContain('run times: NOT LEARNED: Slurm accounting storage is disabled; time limits and the configured runtime are used');
    expect(renderPage(v)).toContain('Run times are not learned: Slurm accounting storage is disabled. Decisions use time limits and the configured runtime.');
    expect(await w.metrics.registry.metrics()).toContain('estuary_coordinator_run_time_history_up{source="",error="Slurm accounting storage is disabled"} 0');
    expect(w.lines.join('')).toContain('cannot read finished jobs: decisions use time limits and the configured runtime');
  });
});
