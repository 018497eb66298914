// A program's output is bounded by runProgram, never by the program: a site script's streams are
// kept as their two ends, squeue's JSON whole up to a cap beyond which the call fails.

import { expect, test } from 'vitest';
import { KEPT_EDGE_BYTES, MAX_JSON_BYTES, runProgram } from '../../coordinator/proc.ts';

test('a script writing 1 MiB keeps its first and last 64 KiB, and its last line', async () => {
  const r = await runProgram('/bin/sh', ['-c', 'head -c 1048576 /dev/zero | tr "\\0" x; echo; echo last line'], { timeoutMs: 20_000 });
  expect(r.code).toBe(0);
  expect(r.stdout.length).toBeLessThan(2 * KEPT_EDGE_BYTES + 100);
  expect(r.stdout).toMatch(/bytes left out/);
  expect(r.stdout.trim().split('\n').pop()).toBe('last line');
});

test('output past maxOutputBytes kills the program and fails the call', async () => {
  const started = Date.now();
  await expect(runProgram('/bin/sh', ['-c', 'exec cat /dev/zero'], { timeoutMs: 20_000, maxOutputBytes: 1024 * 1024 })).rejects.toThrow(/output too large/);
  expect(Date.now() - started).toBeLessThan(10_000);
});

test('a caller\'s cap holds above the runaway cap: MAX_JSON_BYTES (docs: squeue --json of ~160 000 jobs) is read whole, a byte more is refused', async () => {
  const print = (n: number) => runProgram('/bin/sh', ['-c', `head -c ${n} /dev/zero | tr "\\0" x`], { timeoutMs: 50_000, maxOutputBytes: MAX_JSON_BYTES });
  const r = await print(MAX_JSON_BYTES);
  expect(r.code).toBe(0);
  expect(r.stdout.length).toBe(MAX_JSON_BYTES);
  expect(MAX_JSON_BYTES).toBeGreaterThanOrEqual(160_000 * 3101);
  await expect(print(MAX_JSON_BYTES + 1)).rejects.toThrow(/output too large/);
}, 60_000);
