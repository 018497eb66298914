// The scenario file docs/BENCHMARKING.md shows is a real one: it parses, and the error it quotes
// for a misspelt key is the one a user gets.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../../coordinator/sim/scenario.ts';

const doc = readFileSync(new URL('../../../docs/BENCHMARKING.md', import.meta.url), 'utf8');
const section = doc.slice(doc.indexOf('### Scenario files'));
const example = /```yaml\n([\s\S]*?)```/.exec(section)![1]!;
const trace = () => JSON.stringify([{ submit: 0, runtime: 60, inputs: [{ url: 's3://data/a', bytes: 1 }] }]);

describe('docs/BENCHMARKING.md scenario example', () => {
  it('parses with every key it shows', () => {
    const s = parseScenario(example, '/docs/example.yaml', trace);
    expect(s.sites[0]).toMatchObject({ name: 'aws', boot: 120_000, bootJitter: 60_000, capacity: 120, at: 'bucket', spot: false });
    expect(s.sites[0]!.config).toMatchObject({ quota: 100, spotPerCoreHour: 0.0128 });
    expect(s.maxTimeMs).toBe(14 * 86_400_000);
    expect(s.homeLocation).toBe('site-store');
  });

  it('quotes the error a misspelt sim key gives', () => {
    const quoted = /`(scenario s\.yaml: sites\.aws\.sim: [^`]*)`/.exec(section)![1]!;
    const bad = example.replace('boot: 2m,', 'boot-time: 2m,');
    expect(() => parseScenario(bad, 's.yaml', trace)).toThrow(quoted);
  });
});
