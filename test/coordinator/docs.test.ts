// docs/ERRORS.md lists every code the coordinator can raise; docs/COORDINATOR.md documents every
// configuration key, drone state and controller default the code has.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONTROLLER_DEFAULTS } from '../../coordinator/config.ts';
import { DRONE_STATES } from '../../coordinator/model.ts';
import { coordinatorOptions } from '../../coordinator/options.ts';

const root = new URL('../../', import.meta.url).pathname;
const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : n.endsWith('.ts') ? [join(dir, n)] : []));

describe('coordinator docs', () => {
  it('docs/ERRORS.md lists every ESTUARY_CO_ code', () => {
    const doc = readFileSync(join(root, 'docs/ERRORS.md'), 'utf8');
    const codes = new Set<string>();
    for (const f of files(join(root, 'coordinator')))
      for (const m of readFileSync(f, 'utf8').matchAll(/['"`](ESTUARY_CO_[A-Z0-9_]+)['"`]/g)) codes.add(m[1]!);
    expect(codes.size).toBeGreaterThan(5);
    expect([...codes].filter((c) => !doc.includes(`\`${c}\``))).toEqual([]);
  });

  it('docs/COORDINATOR.md names every option, state and controller default', () => {
    const doc = readFileSync(join(root, 'docs/COORDINATOR.md'), 'utf8');
    for (const key of Object.keys(coordinatorOptions)) {
      const kebab = key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
      expect(doc, kebab).toContain(`\`${kebab}\``);
    }
    for (const state of DRONE_STATES) expect(doc, state).toContain(`\`${state}\``);
    for (const [type, defaults] of Object.entries(CONTROLLER_DEFAULTS)) {
      expect(doc, type).toContain(`\`${type}\``);
      if (type === 'threshold') continue;
      for (const [k, v] of Object.entries(defaults)) {
        const kebab = k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
        const shown = type === 'glideinwms' && k === 'oldIdleAfter' ? '10m' : type === 'estuary' && typeof v === 'number' && k !== 'wanPerGb' ? `${v / 3_600_000}h` : String(v).replace('.', '\\.');
        expect(doc, `${type}.${kebab}`).toMatch(new RegExp(`\`${kebab}\`[^\\n]*\\b${shown}\\b`));
      }
    }
  });
});
