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

/** Every stable code named in a string in the source (a prefix such as 'ESTUARY_STAGE_' ends in _ and is not one). */
function sourceCodes(): Set<string> {
  const codes = new Set<string>();
  for (const file of SOURCE_DIRS.flatMap((d) => sourceFiles(join(root, d)))) {
    for (const m of readFileSync(file, 'utf8').matchAll(/['"`](ESTUARY_[A-Z0-9]+(?:_[A-Z0-9]+)+)['"`]/g)) codes.add(m[1]!);
  }
  return codes;
}

/** The codes docs/ERRORS.md documents: the first column of its tables. */
function documentedCodes(doc: string): Set<string> {
  return new Set([...doc.matchAll(/^\| `(ESTUARY_[A-Z0-9_]+)` \|/gm)].map((m) => m[1]!));
}

describe('docs/ERRORS.md', () => {
  const doc = readFileSync(join(root, 'docs/ERRORS.md'), 'utf8');
  const inSource = sourceCodes();
  const inDoc = documentedCodes(doc);

  it('lists every error code the code can raise, with its meaning and what to do', () => {
    expect(inSource.size).toBeGreaterThan(50);
    const missing = [...inSource].filter((c) => !inDoc.has(c));
    expect(missing, 'codes missing from the tables of docs/ERRORS.md').toEqual([]);
    // Each row has the code, its meaning (the cause) and what to do (the fix), neither empty.
    for (const m of doc.matchAll(/^\| `(ESTUARY_[A-Z0-9_]+)` \|(.*)$/gm)) {
      const cells = m[2]!.split(/(?<!\\)\|/).map((c) => c.trim());
      expect(cells.slice(0, 2).every((c) => c.length > 0), `${m[1]}: meaning and what to do`).toBe(true);
    }
  });

  it('lists no code the source does not have (retired codes say so)', () => {
    const retired = (c: string) => new RegExp(`^\\| \`${c}\` \\|[^\\n]*\\bretired\\b`, 'im').test(doc);
    const stale = [...inDoc].filter((c) => !inSource.has(c) && !retired(c));
    expect(stale, 'codes in docs/ERRORS.md that nothing in the source raises').toEqual([]);
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
