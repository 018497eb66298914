// The loop writes a drone to the registry only when something about it changes: a drone that
// stays busy is not rewritten every interval, yet its idle time still starts when its last job
// ended (the busy time kept in memory is written when it falls idle).

import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { MemoryBatch } from '../../coordinator/batch/memory.ts';
import { VirtualClock } from '../../coordinator/clock.ts';
import { controllerSchema } from '../../coordinator/config.ts';
import { makeController } from '../../coordinator/controllers.ts';
import { Coordinator } from '../../coordinator/coordinator.ts';
import type { Logger } from '../../lib/log.ts';
import { firstFit } from '../../coordinator/placement.ts';
import { DroneRegistry } from '../../coordinator/registry.ts';
import { MemorySite } from '../../coordinator/sites/memory.ts';

describe('registry writes', () => {
  it('writes a busy drone when it becomes busy and when it falls idle, not every interval between', async () => {
    const clock = new VirtualClock(5 * 86_400_000);
    const site = new MemorySite('aws', clock, 1000);
    const batch = new MemoryBatch([site]);
    const registry = DroneRegistry.inMemory();
    const writes: number[] = [];
    const put = registry.put.bind(registry);
    registry.put = (d, at) => {
      writes.push(d.lastBusyAt);
      return put(d, at);
    };
    const c = makeController(controllerSchema.parse({ type: 'threshold' }));
    const coordinator = new Coordinator({
      registry,
      batch,
      sites: new Map([['aws', site]]),
      siteSettings: [{ name: 'aws', quota: 1, min: 0, machineTypes: ['small'], costPerCoreHour: 0, idleTime: 60_000, bootTimeout: 600_000, minLifetime: 0 }],
      machineTypes: { small: { cores: 2, memory: 4 * 1024 ** 3, features: [] } },
      policy: { controllerFor: () => c, placement: firstFit },
      intervalMs: 1000,
      clock,
      log: pino({ level: 'silent' }) as unknown as Logger,
      prefix: 'rw-',
    });
    const tick = async () => {
      clock.advance(1000);
      batch.schedule();
      await coordinator.tick();
    };
    batch.pending = [{ id: 'j1', partition: 'p', cpus: 1, memoryMb: 1, constraints: [], inputs: [], submittedAt: clock.now(), reason: 'Resources' }];
    for (let i = 0; i < 5; i++) await tick();
    const drone = registry.all()[0]!;
    expect(drone.state).toBe('available');
    expect(batch.pending).toEqual([]);
    const busyFrom = writes.length;
    for (let i = 0; i < 20; i++) await tick();
    // Twenty busy intervals: no write at all after the one that recorded the drone busy.
    expect(writes.length - busyFrom).toBeLessThanOrEqual(1);
    const lastBusy = clock.now();
    batch.finish(drone.id, 1);
    await tick();
    // Falling idle writes the last time it was seen busy: the idle time counts from there.
    expect(registry.all()[0]!.lastBusyAt).toBe(lastBusy);
    registry.close();
  });
});
