// `estuary bench gateway --quick --cases hostile` end to end: the hostile-origins case runs
// through estuary with one and two workers, as a user would run it, and its report says no worker
// died and no complete answer carried wrong bytes. The origin's personalities that cut must be
// met: a run where nothing misbehaved would prove nothing.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/tmp.ts';
import { readResults, runBench } from './helpers.ts';

describe('estuary bench gateway --cases hostile --quick', () => {
  it('reports 0 restarts, 0 wrong bytes and the memory of both gateways', async () => {
    const out = join(await tempDir('estuary-bench-out-'), 'run');
    const work = await tempDir('estuary-bench-work-');
    const r = await runBench(['gateway', '--quick', '--cases', 'hostile', '--out', out, '--work-dir', work]);
    expect(r.code, r.output).toBe(0);
    const gateway = (await readResults(out)).scenarios[0]!;
    expect(gateway.peers.map((p) => `${p.peer} ${p.status}`)).toEqual(['estuary-w1 ok', 'estuary-w2 ok']);
    const row = (c: string, peer: string) =>
      gateway.measurements.find((m) => m.case === `hostile origins: ${c}` && m.peer === peer)?.summary.median;
    for (const peer of ['estuary-w1', 'estuary-w2']) {
      expect(row('worker restarts', peer), peer).toBe(0);
      expect(row('wrong bytes in a complete 200', peer), peer).toBe(0);
      expect(row('requests/s', peer), peer).toBeGreaterThan(0);
      expect(row('RSS at peak', peer), peer).toBeGreaterThan(0);
      expect(row('RSS after 12 s idle', peer), peer).toBeGreaterThan(0);
    }
    // Only the hostile case ran: no shared proxy was started for the others.
    expect(gateway.measurements.every((m) => m.case.startsWith('hostile origins: '))).toBe(true);
    const notes = gateway.notes.join('\n');
    expect(notes).toMatch(/answered per personality: .*reset-mid-body [1-9].*/);
    expect(notes).toMatch(/length-too-short [1-9]/);
    const report = await readFile(join(out, 'report.md'), 'utf8');
    expect(report).toMatch(/^\| hostile origins: worker restarts \| 0(\.0)? \| 0(\.0)? \|$/m);
    expect(report).toMatch(/^\| hostile origins: wrong bytes in a complete 200 \| 0(\.0)? \| 0(\.0)? \|$/m);
  }, 90_000);
});
