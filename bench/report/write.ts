// Puts a run's results on disk: results.json, report.md and one SVG per chart, side by side so
// the report's relative image links work wherever the directory is copied.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Results } from '../results.ts';
import { chartsFor } from './charts.ts';
import { renderReport } from './markdown.ts';
import { renderLineChart } from './lines.ts';
import { renderBarChart } from './svg.ts';

export async function writeReport(dir: string, results: Results, withJson = true): Promise<string[]> {
  const written = ['report.md'];
  if (withJson) {
    await writeFile(join(dir, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
    written.push('results.json');
  }
  for (const s of results.scenarios) {
    for (const chart of chartsFor(s, { quick: results.settings.quick })) {
      const file = `${chart.id}.svg`;
      await writeFile(join(dir, file), renderBarChart(chart));
      written.push(file);
    }
  }
  for (const s of results.scenarios)
    for (const series of s.series ?? []) {
      await writeFile(join(dir, `${series.id}.svg`), renderLineChart(series));
      written.push(`${series.id}.svg`);
    }
  await writeFile(
    join(dir, 'report.md'),
    renderReport(results, (id) => `${id}.svg`),
  );
  return written;
}
