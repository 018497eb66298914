import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { FS_LOG_CODES, fsErrors } from '../../fuse/errors.ts';
import type { EstuaryError } from '../../lib/errors.ts';

describe('the fuse error catalogue', () => {
  it('lists every code in docs/ERRORS.md and exits 2 for bad input', async () => {
    const doc = await readFile(new URL('../../docs/ERRORS.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('\n## fuse'));
    const made = Object.values(fsErrors).map((make) => (make as (...a: string[]) => EstuaryError)('x', 'y'));
    const codes = [...made.map((e) => e.code), ...Object.values(FS_LOG_CODES)];
    for (const code of codes) expect(section, code).toContain(`\`${code}\``);
    for (const e of made) expect(e.message).not.toMatch(/\n/);
    expect(fsErrors.badSource('x').exitCode).toBe(2);
  });
});
