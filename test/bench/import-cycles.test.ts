// The bench's modules import one another without a cycle (a cycle makes load order decide which
// bindings exist at start-up). Static relative imports of bench/ and coordinator/, followed.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const IMPORT = /^(?:import|export)[^'"]*?from\s+['"](\.[^'"]+)['"]/gm;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

function cycles(roots: readonly string[]): string[] {
  const deps = (f: string) => [...readFileSync(f, 'utf8').matchAll(IMPORT)].map((m) => resolve(dirname(f), m[1]!));
  const state = new Map<string, 1 | 2>();
  const stack: string[] = [];
  const found: string[] = [];
  const visit = (f: string): void => {
    state.set(f, 1);
    stack.push(f);
    for (const d of deps(f)) {
      if (state.get(d) === 1) found.push([...stack.slice(stack.indexOf(d)), d].map((x) => relative(ROOT, x)).join(' -> '));
      else if (!state.has(d)) visit(d);
    }
    stack.pop();
    state.set(f, 2);
  };
  for (const f of roots.flatMap((r) => files(join(ROOT, r)))) if (!state.has(f)) visit(f);
  return found;
}

describe('import cycles', () => {
  it('bench/ and coordinator/ have none', () => {
    expect(cycles(['bench', 'coordinator'])).toEqual([]);
  });
});
