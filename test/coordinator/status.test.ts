// The status view, its page (escaped, no JavaScript), the JSON API and /metrics, through the
// HTTP server with a coordinator on in-memory adapters.

import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../coordinator/metrics.ts';
import { buildHttp } from '../../coordinator/status/http.ts';
import { money, renderPage } from '../../coordinator/status/page.ts';
import { buildStatus, droneCost, statusTable } from '../../coordinator/status/view.ts';
import type { Drone } from '../../coordinator/model.ts';
import { job, makeWorld, run } from './helpers/world.ts';

const drone = (o: Partial<Drone>): Drone => ({
  id: 'es-cloud-1',
  site: 'cloud',
  machineType: 'small',
  state: 'available',
  createdAt: 0,
  stateSince: 0,
  lastBusyAt: 0,
  instance: {},
  reason: { rule: 'node-joined', cpus: 2 },
  ...o,
});

describe('status view', () => {
  it('costs cores × price × hours, frozen when the drone went down', () => {
    expect(droneCost(drone({}), 4, 0.05, 3_600_000)).toBe(0.2);
    expect(droneCost(drone({ state: 'down', stateSince: 1_800_000 }), 4, 0.05, 7_200_000)).toBe(0.1);
  });

  it('shows small amounts of money instead of rounding them to $0.00', () => {
    expect([0, 0.004, 0.0042, 0.05, 0.0123, 0.1, 1.234, 25, 0.00001].map(money)).toEqual([
      '$0.00', '$0.004', '$0.0042', '$0.05', '$0.012', '$0.10', '$1.23', '$25.00', '<$0.0001',
    ]);
    // 2 cores at $0.1 for 1 minute today: $0.0033, against a budget of $5.
    const v = buildStatus([drone({})], [{ name: 'cloud', quota: 3, costPerCoreHour: 0.1, cost: { budgetPerDay: 5 } as never }], () => 2, undefined, 60_000);
    expect(renderPage(v)).toContain('<td>$0.0033 of $5.00</td>');
  });

  it('says an unreachable batch system and an unhealthy site at the top, in words', () => {
    const last = { batchHealthy: false, batchError: 'squeue: error: could not find slurm.conf', batchEverRead: true, unhealthySites: ['cloud'], siteProblems: { cloud: '3 instances failed in a row' } };
    const html = renderPage(buildStatus([drone({})], [{ name: 'cloud', quota: 3, costPerCoreHour: 0.1 }], () => 2, last as never, 60_000));
    const top = html.slice(0, html.indexOf('<h2>'));
    expect(top).toContain('<p class="sum over">⚠ The batch system is unreachable: squeue: error: could not find slurm.conf.');
    expect(top).toContain('⚠ Site cloud is unhealthy: 3 instances failed in a row');
    const fine = renderPage(buildStatus([drone({})], [{ name: 'cloud', quota: 3, costPerCoreHour: 0.1 }], () => 2, { batchHealthy: true } as never, 60_000));
    expect(fine).not.toContain('⚠');
  });

  it('escapes everything on the page and has no script', () => {
    const v = buildStatus(
      [drone({ id: '<img src=x onerror=alert(1)>', reason: { rule: '<b>x</b>' } })],
      [{ name: 'cloud', quota: 3, costPerCoreHour: 0.1 }],
      () => 2,
      undefined,
      60_000,
    );
    const html = renderPage(v);
    expect(html).not.toContain('<img src=x');
    expect(html).not.toContain('<b>x');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).not.toMatch(/<script/i);
    expect(statusTable(v)).toMatch(/cloud +1\/3 +yes +\$0\.0033/);
    // A job comment's escape sequence never reaches the admin's terminal.
    const evil = buildStatus([drone({ reason: { rule: 'estuary', why: '1 pending job need s3://x/\u001b]0;pwned\u0007 (size unknown)' } })], [{ name: 'cloud', quota: 3, costPerCoreHour: 0.1 }], () => 2, undefined, 60_000);
    expect(statusTable(evil)).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
    expect(statusTable(evil)).toContain('s3://x/?]0;pwned? (size unknown)');
  });

  it('serves the API, a drone with its transitions, the page and metrics', async () => {
    const w = makeWorld({ quota: 2 });
    w.batch.pending = [job('a', 2)];
    await run(w, 7);
    const view = (all = false) => buildStatus(w.registry.all(), [{ name: 'cloud', quota: 2, costPerCoreHour: 0.05 }], () => 2, w.coordinator.last, w.clock.now(), all);
    const metrics = createMetrics(() => view());
    const app = buildHttp({ view, timeline: () => w.coordinator.timeline, registry: w.registry, metrics: metrics.registry });
    const status = (await app.inject('/api/v1/status')).json();
    expect(status).toMatchObject({ version: 1, batchHealthy: true, sites: [{ name: 'cloud', quota: 2, drones: 1 }] });
    expect(status.drones[0]).toMatchObject({ id: 'es-cloud-1', state: 'available', reason: { rule: 'node-joined' } });
    expect(status.pools[0]).toMatchObject({ pool: 'cloud/small', supply: 2 });
    const one = (await app.inject('/api/v1/drones/es-cloud-1')).json();
    expect(one.transitions.map((t: { to: string }) => t.to)).toEqual(['requested', 'booting', 'integrating', 'available']);
    expect((await app.inject('/api/v1/drones/nope')).statusCode).toBe(404);
    const page = await app.inject('/');
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.body).toContain('es-cloud-1');
    const m = (await app.inject('/metrics')).body;
    expect(m).toContain('estuary_coordinator_drones{site="cloud",state="available"} 1');
    expect(m).toContain('estuary_coordinator_site_quota{site="cloud"} 2');
    expect(m).toContain('estuary_coordinator_batch_system_up 1');
    const points = (await app.inject('/api/v1/timeline')).json().points as { pending: number; drones: number }[];
    expect(points).toHaveLength(7);
    expect(points[0]!.pending).toBe(1);
    const svg = await app.inject('/timeline.svg');
    expect(svg.headers['content-type']).toMatch(/image\/svg\+xml/);
    expect(svg.body).toMatch(/^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    for (const s of ['pending', 'home', 'drones', 'live']) expect(svg.body).toContain(`class="series-${s}"`);
    expect(svg.body).not.toMatch(/<script/i);
    await app.close();
    w.registry.close();
  });
});
