// The npm packages a command can load, read from the source: from the command's entry file, every
// local module it imports (statically or lazily, `import('./x.ts')`) is followed, and every bare
// specifier met on the way (`from 'amqplib'`, `import('maxmind')`, `require.resolve('s3rver/…')`)
// is a package it may load. Type-only imports load nothing and are left out. A package loaded
// only inside an optionalPackage() call (lib/optional-package.ts) is listed apart: the command runs
// without it until the feature that needs it is used, and then says how to install it.
// test/cli/footprint.test.ts holds the worker-node commands to the packages README.md lists;
// `node scripts/module-graph.ts` prints every command's packages.
//
// The reading is textual (regular expressions over the source, which this project writes in one
// style), so it errs towards listing too much: an import in a comment counts as one.

import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..');

const TYPE_ONLY = /^\s*(?:import|export)\s+type\s[^;]*;/gm;
const STATIC = /^\s*(?:import|export)\s+(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;
const REQUIRE = /\brequire(?:\.resolve)?\(\s*['"]([^'"]+)['"]/g;
// A module started as its own process or loaded by a computed import: `new URL('./worker-main.ts',
// import.meta.url)`, `file: './gateway/index.ts'`.
const LOCAL_TS = /['"](\.{1,2}\/[^'"\s]+\.ts)['"]/g;
const OPTIONAL = /\boptionalPackage(?:Sync)?\(\s*['"]([^'"]+)['"]/g;

const BUILTIN = new Set(builtinModules);

/** The package a bare specifier names: `@scope/name` or `name`; undefined for a builtin or a path. */
export function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:')) return undefined;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
  return BUILTIN.has(name) ? undefined : name;
}

export interface ModuleGraph {
  /** Local files reached, relative to the package root. */
  readonly files: string[];
  /** Packages that are loaded whenever the command runs, or by a feature without a guard. */
  readonly packages: string[];
  /** Packages loaded only through optionalPackage(): the feature names them when missing. */
  readonly optional: string[];
}

/** Everything reachable from `entries` (paths relative to the package root). */
export function moduleGraph(entries: readonly string[]): ModuleGraph {
  // cli/commands.ts loads every command lazily; a command's graph starts at its own entry.
  const commandTable = join(ROOT, 'cli/commands.ts');
  const seen = new Set<string>();
  const packages = new Set<string>();
  const guarded = new Set<string>();
  const queue = entries.map((e) => resolve(ROOT, e));
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, 'utf8').replace(TYPE_ONLY, '');
    // In this file, the packages loaded inside an optionalPackage() call.
    const guards = new Set([...text.matchAll(OPTIONAL)].map((m) => m[1]!));
    const lazy = file === commandTable ? [] : [DYNAMIC, REQUIRE, LOCAL_TS];
    for (const re of [STATIC, ...lazy]) {
      for (const m of text.matchAll(re)) {
        const spec = m[1]!;
        if (spec.startsWith('.')) {
          if (spec.endsWith('.ts')) queue.push(join(dirname(file), spec));
          continue;
        }
        const pkg = packageOf(spec);
        if (!pkg) continue;
        // A static import loads the package with the file, whatever else the file does.
        if (re !== STATIC && guards.has(pkg)) guarded.add(pkg);
        else packages.add(pkg);
      }
    }
  }
  return {
    files: [...seen].map((f) => relative(ROOT, f)).sort(),
    packages: [...packages].sort(),
    optional: [...guarded].filter((p) => !packages.has(p)).sort(),
  };
}

/** The entry file of each command, read from cli/commands.ts (`load: … import('../x/command.ts')`). */
export function commandEntries(): Map<string, string> {
  const text = readFileSync(join(ROOT, 'cli/commands.ts'), 'utf8');
  const entries = new Map<string, string>();
  for (const m of text.matchAll(/name: '([^']+)',[^}]*?import\('\.\.\/([^']+)'\)/gs)) entries.set(m[1]!, m[2]!);
  return entries;
}

/** The graph of one command as `estuary <name>` runs it: the CLI, then the command's module. */
export function commandGraph(name: string): ModuleGraph {
  const entry = commandEntries().get(name);
  if (!entry) throw new Error(`no command ${name} in cli/commands.ts`);
  const cli = moduleGraph(['cli/main.ts']);
  const own = moduleGraph([entry]);
  const merge = (a: string[], b: string[]) => [...new Set([...a, ...b])].sort();
  const packages = merge(
    cli.packages.filter((p) => !own.optional.includes(p)),
    own.packages,
  );
  return {
    files: merge(cli.files, own.files),
    packages,
    optional: merge(cli.optional, own.optional).filter((p) => !packages.includes(p)),
  };
}

if (import.meta.main) {
  for (const name of commandEntries().keys()) {
    const g = commandGraph(name);
    const optional = g.optional.length > 0 ? `; when used: ${g.optional.join(', ')}` : '';
    console.log(`${name}: ${g.packages.join(', ')}${optional}`);
  }
}
