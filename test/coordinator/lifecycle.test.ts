// The control loop and the drone lifecycle under a virtual clock, against in-memory adapters:
// bursting, quota, idle release, minimum lifetime, boot timeout, lost drones, failures of the
// site and the batch system, and restarts from the registry.

import { afterEach, describe, expect, it } from 'vitest';
import { job, makeWorld, run, states, type World } from './helpers/world.ts';

let worlds: World[] = [];
const world = (o?: Parameters<typeof makeWorld>[0]) => {
  const w = makeWorld(o);
  worlds.push(w);
  return w;
};
afterEach(() => {
  for (const w of worlds)
    try {
      w.registry.close();
    } catch {
      // closed by a restart
    }
  worlds = [];
});

describe('coordinator lifecycle', () => {
  it('bursts for pending jobs, never past the quota, and releases drones after the idle time', async () => {
    const w = world({ quota: 3, idleTime: 10_000 });
    w.batch.pending = Array.from({ length: 10 }, (_, i) => job(`j${i}`, 1));
    await run(w, 1);
    expect(w.site.instances.size).toBe(3); // 10 cores wanted, quota 3 drones of 2 cores
    await run(w, 6); // boot (5 s) and join
    expect(Object.values(states(w))).toEqual(['available', 'available', 'available']);
    expect(w.batch.integrated).toHaveLength(3);
    const placed = w.batch.schedule();
    expect(placed).toHaveLength(6);
    await run(w, 15);
    expect(w.site.instances.size).toBe(3); // busy drones are not released
    for (const p of placed) w.batch.finish(p.node, 1);
    w.batch.pending = [];
    await run(w, 9);
    expect(w.site.instances.size).toBe(3); // idle 9 s < 10 s
    await run(w, 4);
    expect(w.site.instances.size).toBe(0);
    expect(w.batch.nodesByName.size).toBe(0);
    expect(Object.values(states(w))).toEqual(['down', 'down', 'down']);
    const path = w.registry.transitions().filter((t) => t.droneId === 'es-cloud-1').map((t) => t.to);
    expect(path).toEqual(['requested', 'booting', 'integrating', 'available', 'draining', 'stopping', 'down']);
  });

  it('keeps an idle drone until its minimum lifetime', async () => {
    const w = world({ idleTime: 1000, minLifetime: 60_000 });
    w.batch.pending = [job('a', 2)];
    await run(w, 7);
    w.batch.pending = [];
    await run(w, 40);
    expect(w.site.instances.size).toBe(1);
    await run(w, 25);
    expect(w.site.instances.size).toBe(0);
  });

  it('gives up on an instance that never boots and leaves nothing behind', async () => {
    const w = world({ bootTimeout: 20_000, quota: 1 });
    w.site.neverBoot = true;
    w.batch.pending = [job('a', 2)];
    await run(w, 23);
    const first = w.registry.get('es-cloud-1')!;
    expect(first.state).toBe('down');
    expect(w.registry.transitions('es-cloud-1').map((t) => t.to)).toContain('error');
    expect(w.registry.transitions('es-cloud-1').find((t) => t.to === 'error')!.reason.rule).toBe('boot-timeout');
    expect(w.site.instances.has('es-cloud-1')).toBe(false);
  });

  it('replaces a drone whose instance dies, and removes its node', async () => {
    const w = world({ quota: 1 });
    w.batch.pending = [job('a', 2), job('b', 2)];
    await run(w, 7);
    w.batch.schedule();
    w.site.kill('es-cloud-1');
    await run(w, 2);
    expect(w.registry.get('es-cloud-1')!.state).toBe('down');
    expect(w.batch.nodesByName.has('es-cloud-1')).toBe(false);
    expect(w.registry.get('es-cloud-2')?.state).toBeDefined();
  });

  it('drains a drone whose instance gets an interruption notice, and replaces one interrupted while booting', async () => {
    const w = world({ quota: 2 });
    w.batch.pending = [job('a', 2), job('b', 2), job('c', 2)];
    await run(w, 7);
    const placed = w.batch.schedule();
    expect(placed).toHaveLength(2);
    w.site.interrupt('es-cloud-1');
    await run(w, 1);
    expect(w.registry.get('es-cloud-1')!.state).toBe('draining');
    expect(w.registry.get('es-cloud-1')!.reason.rule).toBe('interruption-notice');
    expect(w.batch.schedule()).toEqual([]); // a draining node takes no new job
    // The running job finishes before the instance goes; then the drone is released.
    w.batch.finish('es-cloud-1', 2);
    await run(w, 2);
    expect(['stopping', 'down']).toContain(w.registry.get('es-cloud-1')!.state);
    // A drone still booting when the notice comes is given up and replaced.
    w.batch.pending = [job('d', 2)];
    await run(w, 2);
    const booting = Object.entries(states(w)).find(([, s]) => s === 'booting' || s === 'requested')?.[0];
    expect(booting).toBeDefined();
    w.site.interrupt(booting!);
    await run(w, 2);
    expect(w.registry.transitions(booting!).map((t) => t.to)).toContain('error');
  });

  it('starts and stops nothing while the batch system is down', async () => {
    const w = world({ idleTime: 1000 });
    w.batch.pending = [job('a', 2)];
    await run(w, 7);
    w.batch.pending = [];
    w.batch.down = true;
    await run(w, 20);
    expect(states(w)).toEqual({ 'es-cloud-1': 'available' });
    expect(w.coordinator.last!.pools[0]!.reason.rule).toBe('batch-system-unreachable');
    w.batch.down = false;
    await run(w, 3);
    expect(w.site.instances.size).toBe(0);
  });

  it('keeps drones whose site API is down, and starts none there', async () => {
    const w = world();
    w.batch.pending = [job('a', 2)];
    await run(w, 7);
    w.site.down = true;
    w.batch.pending = [job('b', 2), job('c', 2)];
    w.batch.schedule();
    await run(w, 5);
    expect(states(w)).toEqual({ 'es-cloud-1': 'available' });
    expect(w.coordinator.last!.unhealthySites).toEqual(['cloud']);
    w.site.down = false;
    await run(w, 10); // past the back-off (asked again 8 s after the third failure)
    expect(w.site.instances.size).toBe(2); // b runs on the first drone, c needs a second
  });

  it('backs off a failing site, then uses it again once it answers', async () => {
    const w = world({ idleTime: 600_000 });
    w.batch.pending = [job('a', 2)];
    await run(w, 7);
    let calls = 0;
    const status = w.site.status.bind(w.site);
    w.site.status = async (id: string) => {
      calls++;
      return status(id);
    };
    w.site.down = true;
    await run(w, 30);
    // Asked at 1, 2, 4, 8 and 16 intervals after each failure: 5 times in 30, not 30.
    expect(calls).toBeLessThanOrEqual(6);
    expect(w.coordinator.last!.unhealthySites).toEqual(['cloud']);
    w.site.down = false;
    await run(w, 20);
    expect(w.coordinator.last!.unhealthySites).toEqual([]);
    expect(states(w)).toEqual({ 'es-cloud-1': 'available' });
  });

  it('a restart adopts every drone, finishes their lifecycle, and stops orphans', async () => {
    let w = world({ idleTime: 5000 });
    w.batch.pending = [job('a', 2), job('b', 2)];
    await run(w, 3); // booting
    // An instance under our prefix the registry never heard of: an orphan.
    await w.site.deploy({ id: 'es-cloud-99', site: 'cloud', machineType: 'small', cores: 2, memoryMb: 1, features: [] });
    w = w.restart();
    worlds.push(w);
    const r = await w.coordinator.reconcile();
    expect(r).toEqual({ adopted: 2, orphans: ['es-cloud-99'] });
    expect(w.site.instances.has('es-cloud-99')).toBe(false);
    await run(w, 4);
    expect(Object.values(states(w))).toEqual(['available', 'available']);
    expect(w.site.deploys).toBe(3); // nothing deployed twice
    w.batch.pending = [];
    await run(w, 8);
    expect(w.site.instances.size).toBe(0);
  });

  it('redeploys a drone persisted as requested whose deploy never reached the site', async () => {
    let w = world();
    const now = w.clock.now();
    w.registry.put(
      { id: 'es-cloud-5', site: 'cloud', machineType: 'small', state: 'requested', createdAt: now, stateSince: now, lastBusyAt: now, instance: {}, reason: { rule: 't' } },
      now,
    );
    w = w.restart();
    worlds.push(w);
    await run(w, 1);
    expect(w.site.instances.has('es-cloud-5')).toBe(true);
  });

  it('refuses a second coordinator on the same registry', () => {
    const w = world();
    expect(() => makeWorld({ stateDir: w.stateDir })).toThrow(/in use by another coordinator/);
  });
});

describe('a node Slurm still counts busy', () => {
  it('is not stopped while scontrol delete refuses it; stopped once Slurm lets it go', async () => {
    const w = makeWorld({ quota: 1, idleTime: 2000 });
    try {
      w.batch.pending = [job('a', 2)];
      await run(w, 7);
      w.batch.pending = [];
      w.batch.busyOnDelete.add('es-cloud-1');
      await run(w, 8);
      expect(states(w)).toEqual({ 'es-cloud-1': 'stopping' });
      expect(w.site.instances.has('es-cloud-1')).toBe(true); // refused three times and more: waits
      w.batch.busyOnDelete.clear();
      await run(w, 2);
      expect(states(w)).toEqual({ 'es-cloud-1': 'down' });
      expect(w.site.instances.size).toBe(0);
    } finally {
      w.registry.close();
    }
  });
});

describe('saying why', () => {
  it('a pool held by its quota says "quota x/y used"; jobs no pool can run are listed with why', async () => {
    const w = makeWorld({ quota: 1 });
    try {
      w.batch.pending = [job('a', 2), job('b', 2), job('c', 2), job('big', 8), job('gpu', 1, 0, [['gpu']]), job('elsewhere', 1, 0, [['site_mars']])];
      await run(w, 2);
      const pool = w.coordinator.last!.pools[0]!;
      expect(pool.reason).toMatchObject({ rule: 'quota', wanted: 'threshold-met', why: 'cloud: quota 1/1 used: no more drones', quotaUsed: 1, quota: 1 });
      expect(w.coordinator.last!.unplaceable).toEqual([
        { job: 'big', why: 'asks 8 cores; the largest drone has 2' },
        { job: 'gpu', why: 'needs feature gpu, which no drone has' },
        { job: 'elsewhere', why: 'needs feature site_mars, which no drone has (no such site configured)' },
      ]);
      const { buildStatus, statusTable } = await import('../../coordinator/status/view.ts');
      const table = statusTable(buildStatus(w.registry.all(), [{ name: 'cloud', quota: 1, costPerCoreHour: 0 }], () => 2, w.coordinator.last, w.clock.now()));
      expect(table).toContain('PENDING JOBS NO POOL CAN RUN (3)');
      expect(table).toMatch(/gpu +needs feature gpu, which no drone has/);
      expect(table).toContain('cloud: quota 1/1 used: no more drones');
    } finally {
      w.registry.close();
    }
  });
});
