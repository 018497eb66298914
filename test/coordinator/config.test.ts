// The coordinator's configuration through the real CLI: one YAML file, --help with examples,
// and every mistake one line naming the key, exit 2.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commands } from '../../cli/commands.ts';
import { prepareCommand, runCli } from '../../cli/main.ts';
import { command } from '../../coordinator/command.ts';
import { validate } from '../../coordinator/service.ts';

const dir = mkdtempSync(join(tmpdir(), 'estuary-co-config-'));

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { stdout: (t: string) => out.push(t), stderr: (t: string) => err.push(t), env: {} }, out, err };
}

export const GOOD = `
coordinator:
  state-dir: ${dir}/state
  interval: 5s
  idle-time: 2m
  batch-system:
    type: slurm
    partitions: [hybrid]
  controller:
    type: threshold
    rules: [{jobs: 5, pending-for: 10m}, {jobs: 1, pending-for: 60m}]
  machine-types:
    small: {cores: 2, memory: 4GiB, features: [cloud]}
  sites:
    cloud:
      adapter: command
      quota: 3
      machine-types: [small]
      cost-per-core-hour: 0.05
      idle-time: 30s
      command: {start: 'true', stop: 'true', status: 'echo running'}
`;

function withFile(text: string): string {
  const path = join(dir, `c${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(path, text);
  return path;
}

async function fails(text: string): Promise<string> {
  const a = io();
  const code = await runCli(['coordinator', '--config', withFile(text), '--print-config'], a.io, commands);
  expect(code).toBe(2);
  const err = a.err.join('');
  expect(err.trim().split('\n')).toHaveLength(1);
  return err;
}

describe('estuary coordinator config', () => {
  it('names a misspelt key, with what was meant, before the key it leaves missing', async () => {
    expect(await fails(GOOD.replace('quota: 3', 'quta: 2'))).toMatch(/sites\.cloud: unknown key "quta" \(did you mean "quota"\?\)/);
    expect(await fails(GOOD.replace('cost-per-core-hour: 0.05', 'cost-per-core-huor: 0.05'))).toMatch(/unknown key "cost-per-core-huor" \(did you mean "cost-per-core-hour"\?\)/);
  });

  it('names a misspelt section instead of running with no sites', async () => {
    const err = await fails(GOOD.replace('coordinator:', 'coordinater:'));
    expect(err).toMatch(/unknown section "coordinater:" \(did you mean "coordinator:"\?\)/);
    expect(err).not.toMatch(/no sites/);
  });

  it('reads one YAML file with every section, keys in kebab-case', () => {
    const p = prepareCommand(command, ['--config', withFile(GOOD)], {});
    const s = validate(p.config as never);
    expect(s.siteSettings).toEqual([
      expect.objectContaining({ name: 'cloud', quota: 3, idleTime: 30_000, bootTimeout: 600_000, minLifetime: 0 }),
    ]);
    expect((p.config as unknown as { controller: unknown }).controller).toEqual({
      type: 'threshold',
      rules: [
        { jobs: 5, pendingFor: 600_000 },
        { jobs: 1, pendingFor: 3_600_000 },
      ],
    });
  });

  it('reads the cost model, storage locations and the estuary policy', () => {
    const text = GOOD.replace('type: threshold\n    rules: [{jobs: 5, pending-for: 10m}, {jobs: 1, pending-for: 60m}]', 'type: estuary\n    turnaround: 30m\n    home-feature: home')
      .replace('  machine-types:\n', '  storage:\n    kek: {urls: [s3://kek/], egress-per-gb: 0.02}\n    aws: {urls: [s3://aws/]}\n  machine-types:\n')
      .replace('      cost-per-core-hour: 0.05\n', '      cost-per-core-hour: 0.05\n      spot-per-core-hour: 0.015\n      spot-interruption-rate: 0.05\n      egress-per-gb: 0.09\n      bandwidth: 100mbit\n      rtt: 150ms\n      boot-latency: 90s\n      budget-per-day: 200\n      links: {aws: {egress-per-gb: 0, bandwidth: 10gbit}}\n');
    const p = prepareCommand(command, ['--config', withFile(text)], {});
    const s = validate(p.config as never);
    expect(s.siteSettings[0]!.cost).toEqual({
      spotPerCoreHour: 0.015,
      spotInterruptionRate: 0.05,
      egressPerGb: 0.09,
      link: { egressPerGb: 0, bandwidthBps: 100e6, rttMs: 150 },
      links: { kek: { egressPerGb: 0.02, bandwidthBps: 100e6, rttMs: 150 }, aws: { egressPerGb: 0, bandwidthBps: 10e9, rttMs: 150 } },
      bootLatencyMs: 90_000,
      budgetPerDay: 200,
    });
    expect((p.config as unknown as { controller: unknown }).controller).toEqual({ type: 'estuary', turnaround: 1_800_000, runtime: 3_600_000, steer: true, homeFeature: 'home', wanPerGb: 0.02, hold: false });
  });

  it('names a link to an unknown storage location and a bad rate', async () => {
    const a = io();
    const bad = GOOD.replace('      cost-per-core-hour: 0.05\n', '      cost-per-core-hour: 0.05\n      links: {nowhere: {rtt: 5ms}}\n');
    expect(await runCli(['coordinator', '--config', withFile(bad)], a.io, commands)).toBe(2);
    expect(a.err.join('')).toMatch(/^estuary: coordinator config: sites\.cloud\.links\.nowhere: unknown storage location "nowhere"; define it under storage/);
    expect(await fails(GOOD.replace('      cost-per-core-hour: 0.05\n', '      cost-per-core-hour: 0.05\n      bandwidth: fast\n'))).toMatch(/sites\.cloud\.bandwidth: expected a rate such as 100mbit/);
  });

  it('shows help with examples', async () => {
    const a = io();
    expect(await runCli(['coordinator', '--help'], a.io, commands)).toBe(0);
    expect(a.out.join('')).toContain('estuary coordinator --config /etc/estuary/coordinator.yaml');
    expect(a.out.join('')).toContain('--idle-time');
  });

  it('names the key of a bad value deep in a site', async () => {
    expect(await fails(GOOD.replace('quota: 3', 'quota: -1'))).toMatch(/sites\.cloud\.quota: .*docs\/COORDINATOR\.md/);
    expect(await fails(GOOD.replace('cores: 2', 'cores: two'))).toMatch(/machine-types\.small\.cores/);
    expect(await fails(GOOD.replace('pending-for: 10m', 'pending-for: soon'))).toMatch(/controller\.rules\.0\.pending-for: expected a duration/);
  });

  it('names an unknown key', async () => {
    expect(await fails(GOOD.replace('quota: 3', 'quota: 3\n      qouta: 4'))).toMatch(/sites\.cloud.*qouta/);
    expect(await fails(GOOD.replace('  interval: 5s', '  intervall: 5s'))).toMatch(/unknown key "coordinator\.intervall"/);
  });

  it('names a missing adapter section and an unknown controller', async () => {
    expect(await fails(GOOD.replace(/ {6}command: \{.*\}\n/, ''))).toMatch(/sites\.cloud\.command: adapter command needs/);
    expect(await fails(GOOD.replace('type: threshold', 'type: pid'))).toMatch(/controller\.type/);
  });

  it('checks references between sections at start', async () => {
    const a = io();
    const bad = GOOD.replace('machine-types: [small]', 'machine-types: [large]');
    expect(await runCli(['coordinator', '--config', withFile(bad)], a.io, commands)).toBe(2);
    expect(a.err.join('')).toMatch(/^estuary: coordinator config: sites\.cloud\.machine-types: unknown machine type "large"/);
    const b = io();
    expect(await runCli(['coordinator', '--config', withFile('coordinator:\n  interval: 5s\n')], b.io, commands)).toBe(2);
    expect(b.err.join('')).toMatch(/no sites/);
  });

  it('never prints a cloud password with --print-config', async () => {
    const withCloud = GOOD.replace(
      '    cloud:\n',
      `    os:\n      adapter: openstack\n      quota: 1\n      machine-types: [small]\n      openstack: {auth-url: 'https://k.example.org/v3', username: u, password: hunter2-secret, project-name: p, flavor: f, image: i}\n    cloud:\n`,
    );
    const a = io();
    expect(await runCli(['coordinator', '--config', withFile(withCloud), '--print-config'], a.io, commands)).toBe(0);
    expect(a.out.join('')).toContain('<hidden>');
    expect(a.out.join('')).not.toContain('hunter2');
  });

  it('refuses an unknown action', async () => {
    const a = io();
    expect(await runCli(['coordinator', 'frob', '--config', withFile(GOOD)], a.io, commands)).toBe(2);
    expect(a.err.join('')).toMatch(/unknown action "frob"/);
  });
});

describe('estuary coordinator start-up against its registry', () => {
  it('refuses to start when live drones belong to a site the config dropped', async () => {
    const state = mkdtempSync(join(tmpdir(), 'estuary-co-removed-'));
    const { DroneRegistry } = await import('../../coordinator/registry.ts');
    const r = DroneRegistry.open(state);
    r.put({ id: 'es-gone-1', site: 'gone', machineType: 'small', state: 'available', createdAt: 0, stateSince: 0, lastBusyAt: 0, instance: {}, reason: { rule: 't' } }, 0);
    r.close();
    const a = io();
    const cfg = GOOD.replace(`state-dir: ${dir}/state`, `state-dir: ${state}`).replace('interval: 5s', 'interval: 5s\n  listen: 127.0.0.1:0');
    expect(await runCli(['coordinator', '--config', withFile(cfg)], a.io, commands)).toBe(2);
    expect(a.err.join('')).toMatch(/^estuary: the registry holds 1 live drone\(s\) at site gone \(es-gone-1\).*quota: 0/);
  });
});
