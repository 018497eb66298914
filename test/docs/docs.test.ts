// The reference pages that are derived from code must match it.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderConfigurationDoc } from '../../scripts/gen-config-doc.ts';
import { declaredCodes, ERRORS_FILE, renderErrorsDoc, SECTIONS } from '../../scripts/gen-errors-doc.ts';
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

/**
 * Every stable code the source raises: named in a quoted string ('ESTUARY_GW_LISTEN'). A prefix such
 * as 'ESTUARY_STAGE_' ends in _ and is not one; the catalogues' declarations are object keys and
 * their prose quotes codes in backticks, so neither counts.
 */
function raisedCodes(): Set<string> {
  const codes = new Set<string>();
  for (const file of SOURCE_DIRS.flatMap((d) => sourceFiles(join(root, d)))) {
    for (const m of readFileSync(file, 'utf8').matchAll(/['"](ESTUARY_[A-Z0-9]+(?:_[A-Z0-9]+)+)['"]/g)) codes.add(m[1]!);
  }
  return codes;
}

describe('docs/ERRORS.md', () => {
  const declared = declaredCodes();
  const raised = raisedCodes();

  it('is what `npm run docs` generates from the error catalogues', () => {
    const doc = readFileSync(ERRORS_FILE, 'utf8');
    expect(doc, 'docs/ERRORS.md is stale: run `npm run docs`').toBe(renderErrorsDoc());
  });

  it('declares every error code the source raises, with its meaning and what to do', () => {
    expect(raised.size).toBeGreaterThan(50);
    const missing = [...raised].filter((c) => !declared.includes(c));
    expect(missing, "codes raised but not declared in their role's errors.ts (…_CODES)").toEqual([]);
    for (const section of SECTIONS)
      for (const t of section.tables)
        for (const row of t.rows) {
          expect(row.length, `${row[0]}: one cell per column`).toBe(t.columns.length);
          expect(row.every((c) => c.trim().length > 0), `${row[0]}: meaning and what to do`).toBe(true);
        }
  });

  it('declares each code once, and none the source no longer raises (retired codes say so)', () => {
    expect(declared.filter((c, i) => declared.indexOf(c) !== i), 'codes declared twice').toEqual([]);
    const rows = SECTIONS.flatMap((s) => s.tables.flatMap((t) => t.rows));
    const retired = (c: string) => rows.some((r) => r[0] === `\`${c}\`` && /\bretired\b/i.test(r[1] ?? ''));
    const stale = declared.filter((c) => !raised.has(c) && !retired(c));
    expect(stale, 'codes declared that nothing in the source raises').toEqual([]);
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
