// lib/optional-package.ts: a feature whose optional npm package is not usable ends with one line
// naming the package and how to install it, exit 2 (docs/ERRORS.md ESTUARY_MISSING_PACKAGE).
// A package directory left half-installed (an interrupted `npm ci`, a node_modules copied without
// its files: package.json there, its main file not) is as unusable as a missing one. Expected: the
// same ESTUARY_MISSING_PACKAGE line, not Node's "Cannot find module '/…/index.js'" with a stack.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runProgram } from '../../../coordinator/proc.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';

afterAll(runTeardowns);

function halfInstalled(pkg: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'estuary-optpkg-'));
  onTeardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'node_modules', pkg), { recursive: true });
  writeFileSync(join(dir, 'node_modules', pkg, 'package.json'), JSON.stringify({ name: pkg, version: '4.0.0', main: 'lib/index.js' }));
  writeFileSync(join(dir, 'entry.mjs'), `export * from '${pkg}';\n`);
  return dir;
}

// Run in plain Node (the way `estuary` runs), not through vitest's module loader.
async function loadIn(dir: string): Promise<{ code?: string; exitCode?: number; message?: string; loaded?: boolean }> {
  const lib = pathToFileURL(join(process.cwd(), 'lib', 'optional-package.ts')).href;
  writeFileSync(
    join(dir, 'run.mjs'),
    `import { optionalPackage } from ${JSON.stringify(lib)};
try { await optionalPackage('maxmind', { feature: "discovery's IP database", instead: 'give --geo-db none' }, () => import('./entry.mjs')); console.log(JSON.stringify({ loaded: true })); }
catch (e) { console.log(JSON.stringify({ code: e.code, exitCode: e.exitCode, message: e.message })); }\n`,
  );
  const r = await runProgram(join(process.cwd(), 'node_modules', '.bin', 'node'), [join(dir, 'run.mjs')], { timeoutMs: 20_000 });
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

describe('an optional package that is present but broken', () => {
  it('(control) a package left out gives the one-line error', async () => {
    const dir = halfInstalled('maxmind');
    rmSync(join(dir, 'node_modules'), { recursive: true });
    const err = await loadIn(dir);
    expect(err.code).toBe('ESTUARY_MISSING_PACKAGE');
  });

  it('a half-installed package (package.json, no main file) gives the one-line missing-package error', async () => {
    const err = await loadIn(halfInstalled('maxmind'));
    // Today: code ERR_MODULE_NOT_FOUND, "Cannot find module '/tmp/…/node_modules/maxmind/lib/index.js' imported from …".
    expect(err.code).toBe('ESTUARY_MISSING_PACKAGE');
    expect(err.exitCode).toBe(2);
    expect(err.message).toMatch(/maxmind/);
    expect(err.message).not.toMatch(/\n/);
  });
});
