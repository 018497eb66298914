// The systemd units cannot be started here (no systemd), so each is checked the way systemd and
// the CLI would read it: absolute ExecStart of a real estuary command whose flags and environment
// (the example env file plus the unit's own Environment= lines) all parse.

import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { commands } from '../../cli/commands.ts';
import { prepareCommand } from '../../cli/main.ts';

const dir = new URL('../../deploy/systemd/', import.meta.url);
const units = readdirSync(dir).filter((f) => f.endsWith('.service'));

/** Unit file → section → key → values (a key may repeat). */
function parseUnit(text: string): Record<string, Record<string, string[]>> {
  const out: Record<string, Record<string, string[]>> = {};
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const m = /^\[(.+)\]$/.exec(line);
    if (m) {
      section = m[1]!;
      out[section] = {};
      continue;
    }
    const eq = line.indexOf('=');
    const key = line.slice(0, eq);
    const values = out[section]![key] ?? [];
    values.push(line.slice(eq + 1));
    out[section]![key] = values;
  }
  return out;
}

function parseEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m) env[m[1]!] = m[2]!;
  }
  return env;
}

describe('deploy/systemd', () => {
  const env = parseEnvFile(readFileSync(new URL('estuary.env.example', dir), 'utf8'));

  it('has units for agent, coordinator, discovery and gateway', () => {
    expect(units.sort()).toEqual([
      'estuary-agent.service',
      'estuary-coordinator.service',
      'estuary-discovery.service',
      'estuary-gateway.service',
    ]);
  });

  it.each(units)('%s runs a real estuary command with valid settings', async (file) => {
    const unit = parseUnit(readFileSync(new URL(file, dir), 'utf8'));
    const svc = unit.Service!;
    expect(unit.Install?.WantedBy).toEqual(['multi-user.target']);
    expect(svc.EnvironmentFile).toEqual(['/etc/estuary/estuary.env']);
    expect(svc.User).toEqual(['estuary']);
    // The launcher the README links onto PATH: it picks a Node that can run estuary.
    const [exec, sub, ...argv] = svc.ExecStart![0]!.split(/\s+/);
    expect(exec).toBe('/opt/estuary/bin/estuary');
    expect(file).toBe(`estuary-${sub}.service`);
    const entry = commands.find((c) => c.name === sub);
    expect(entry, `estuary has no command "${sub}"`).toBeDefined();
    const unitEnv = Object.fromEntries(
      (svc.Environment ?? []).map((e) => {
        const [k, ...v] = e.split('=');
        return [k!, v.join('=').replace('%d', '/run/credentials/x')];
      }),
    );
    // Every ESTUARY_ variable must belong to some command, or it is a typo nobody would notice.
    const known = new Set<string>();
    for (const c of commands) {
      const cmd = await c.load();
      for (const key of Object.keys(cmd.options)) {
        const flag = key.replace(/[A-Z]/g, (x) => `_${x}`).toUpperCase();
        known.add(`ESTUARY_${cmd.name.toUpperCase()}_${flag}`).add(`ESTUARY_${flag}`);
      }
    }
    for (const name of [...Object.keys(env), ...Object.keys(unitEnv)]) expect(known, name).toContain(name);
    const command = await entry!.load();
    // A config file a unit names under /etc/estuary ships as deploy/<name>.example.yaml.
    const local = argv.map((a) => a.replace(/^\/etc\/estuary\/([\w-]+)\.yaml$/, 'deploy/$1.example.yaml'));
    expect(() => prepareCommand(command, local, { ...env, ...unitEnv })).not.toThrow();
  });

  it('the gateway unit signals only the primary, which stops its workers after draining', () => {
    const unit = parseUnit(readFileSync(new URL('estuary-gateway.service', dir), 'utf8'));
    expect(unit.Service!.KillMode).toEqual(['mixed']);
    expect(unit.Service!.Restart).toEqual(['on-failure']);
  });
});
