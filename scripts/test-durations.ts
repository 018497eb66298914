// Refreshes test/durations.json (the order a clean clone runs the test files in: longest first)
// from the log of a full run: `npm test 2>&1 | tee /tmp/run.log`, then
// `node scripts/test-durations.ts /tmp/run.log`.

import { readFileSync, writeFileSync } from 'node:fs';
import { DURATIONS_FILE, parseDurations } from '../test/helpers/durations.ts';

const log = process.argv[2];
if (!log) {
  console.error('usage: node scripts/test-durations.ts LOG (the output of a full `npm test`)');
  process.exit(2);
}
const table = parseDurations(readFileSync(log, 'utf8'));
const files = Object.keys(table).sort();
if (files.length === 0) {
  console.error(`${log}: no test file lines (" ✓ test/… (N tests) 123ms"); give the log of a full run`);
  process.exit(2);
}
writeFileSync(DURATIONS_FILE, `${JSON.stringify(Object.fromEntries(files.map((f) => [f, table[f]])), null, 1)}\n`);
console.log(`${DURATIONS_FILE}: ${files.length} files`);
