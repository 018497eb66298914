// The reference pages that are derived from code must match it.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderConfigurationDoc } from '../../scripts/gen-config-doc.ts';
import { MATRIX_FILE, type Matrix, STAGING_FILE, withMatrix } from '../../scripts/gen-s3-client-matrix.ts';

const root = new URL('../../', import.meta.url).pathname;
const SOURCE_DIRS = ['lib', 'cli', 'gateway', 'agent', 'discovery', 'fuse', 'bench', 'stage', 'coordinator'];

function sourceFiles(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

describe('docs/ERRORS.md', () => {
  it('lists every error code the code can raise', () => {
    const doc = readFileSync(join(root, 'docs/ERRORS.md'), 'utf8');
    const codes = new Set<string>();
    for (const file of SOURCE_DIRS.flatMap((d) => sourceFiles(join(root, d)))) {
      for (const m of readFileSync(file, 'utf8').matchAll(
        /['"`](ESTUARY_(?:CONFIG|GW|FS|DISC|AGENT|BENCH|STAGE|CO)_[A-Z0-9_]+)['"`]/g,
      )) {
        codes.add(m[1]!);
      }
    }
    expect(codes.size).toBeGreaterThan(5);
    // Codes are ESTUARY_<CATALOGUE>_<NAME>, with one catalogue per role; environment variable names
    // (ESTUARY_GATEWAY_LISTEN) do not match these prefixes.
    const missing = [...codes].filter((c) => !doc.includes(`\`${c}\``));
    expect(missing, 'codes missing from docs/ERRORS.md').toEqual([]);
  });
});

describe('docs/CONFIGURATION.md', () => {
  it('is what `npm run docs` generates from the option tables', async () => {
    const doc = readFileSync(join(root, 'docs/CONFIGURATION.md'), 'utf8');
    expect(doc, 'docs/CONFIGURATION.md is stale: run `npm run docs`').toBe(await renderConfigurationDoc());
  });
});

describe('docs/STAGING.md client matrix', () => {
  it('is what `npm run docs` renders from docs/s3-client-matrix.json', () => {
    const page = readFileSync(STAGING_FILE, 'utf8');
    const matrix = JSON.parse(readFileSync(MATRIX_FILE, 'utf8')) as Matrix;
    expect(page, 'the client matrix in docs/STAGING.md is stale: run `npm run docs`').toBe(withMatrix(page, matrix));
  });
});
