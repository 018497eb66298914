import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDurations, readDurations } from './durations.ts';

const ROOT = join(import.meta.dirname, '..', '..');

describe('test file durations (the order a clean clone runs files in)', () => {
  it('reads the file lines of a default-reporter log, with or without colour codes', () => {
    const log = [
      ' \x1b[32m✓\x1b[39m test/fuse/mount.test.ts \x1b[2m(\x1b[22m\x1b[2m40 tests\x1b[22m\x1b[2m)\x1b[22m\x1b[33m 30534\x1b[2mms\x1b[22m\x1b[39m',
      '     ✓ a test inside it  1955ms',
      ' ❯ test/gateway/x.test.ts (3 tests | 1 failed) 2.5s',
      ' ✓ test/lib/sigv4.test.ts (12 tests | 2 skipped) 8ms',
      'stdout | test/bench/smoke.test.ts > estuary bench all --quick > measures',
    ].join('\n');
    expect(parseDurations(log)).toEqual({ 'test/fuse/mount.test.ts': 30500, 'test/gateway/x.test.ts': 2500, 'test/lib/sigv4.test.ts': 0 });
  });

  it('the table names test files of this suite, with their durations', () => {
    const table = readDurations();
    const files = Object.keys(table);
    expect(files.length).toBeGreaterThan(100);
    const missing = files.filter((f) => !existsSync(join(ROOT, f)));
    // A file deleted or renamed since: `node scripts/test-durations.ts LOG` after a full run.
    expect(missing.length, `listed but gone: ${missing.slice(0, 5).join(', ')}`).toBeLessThan(files.length / 10);
    expect(Object.values(table).every((ms) => Number.isInteger(ms) && ms >= 0)).toBe(true);
  });
});
