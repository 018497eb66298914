// Rewrites report.md and the SVG charts of a finished run from its results.json, for example
// after the report's layout changed or to redraw a figure for a paper:
//   npx node bench/render.ts bench-results/2026-11-21T22-26-00Z

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeReport } from './report/write.ts';
import { parseResults } from './results.ts';

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: node bench/render.ts RESULTS_DIR (the directory holding results.json)\n');
  process.exit(2);
}
const results = parseResults(JSON.parse(await readFile(join(dir, 'results.json'), 'utf8')));
const written = await writeReport(dir, results, false);
process.stdout.write(`rewrote ${written.join(', ')} in ${dir}\n`);
