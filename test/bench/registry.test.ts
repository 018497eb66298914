import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { availableScenarios } from '../../bench/registry.ts';

describe('availableScenarios', () => {
  it('offers fuse always, and gateway and discovery only when their modules are in the tree', () => {
    const names = availableScenarios().map((s) => s.name);
    expect(names[0]).toBe('fuse');
    for (const optional of ['gateway', 'discovery']) {
      const present = existsSync(new URL(`../../bench/${optional}/index.ts`, import.meta.url));
      expect(names.includes(optional), optional).toBe(present);
    }
  });
  it('estimates the fuse disk need from the mode', async () => {
    const fuse = availableScenarios()[0]!;
    const quick = await fuse.estimateBytes({ quick: true, settings: {} });
    const full = await fuse.estimateBytes({ quick: false, settings: {} });
    expect(quick).toBeLessThan(2e8);
    expect(full).toBeGreaterThan(1.2e10);
  });
});
