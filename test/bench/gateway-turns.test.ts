// The gateway scenario's own loop, run for real at --quick size with two repetitions: estuary in
// forward and in reverse mode (so no other proxy needs installing) and the node:http reference
// must take turns in every wrk-driven case, as the runner's check sees it from the order the
// samples arrive in; the report draws the reference as such and pairs each estuary with it.

import { describe, expect, it } from 'vitest';
import { measureGateway } from '../../bench/gateway/index.ts';
import { estuaryPeer, estuaryReversePeer } from '../../bench/gateway/peers.ts';
import { interleavingCheck, type SampleOrder } from '../../bench/interleave.ts';
import { scenarioSection } from '../../bench/report/markdown.ts';
import { scenarioRecord } from '../../bench/results.ts';
import type { SampleEvent } from '../../bench/samples.ts';
import { createLogger } from '../../lib/log.ts';
import { required } from '../helpers/services.ts';
import { tempDir } from '../helpers/tmp.ts';
import { onPath } from './helpers.ts';

const wrk = required('wrk', onPath('wrk'), 'apt-get install wrk');

describe.runIf(wrk.ok)('gateway scenario', () => {
  it('visits every proxy in turn in each repetition of each case', async () => {
    const order: SampleOrder[] = [];
    const result = await measureGateway(
      {
        quick: true,
        workDir: await tempDir('estuary-gw-turns-'),
        installPeers: false,
        log: createLogger({ level: 'silent', format: 'json', role: 'bench' }),
        signal: new AbortController().signal,
        progress: () => undefined,
        // The big object's case runs the same loop as the 4 KiB one; left out to keep the file fast.
        settings: { runs: 2, cases: ['cached-small', 'herd', 'mix'] },
        sample: (e: SampleEvent) => void order.push({ case: e.case, peer: e.peer }),
      } as Parameters<typeof measureGateway>[0],
      [estuaryPeer, estuaryReversePeer],
      { reference: true },
    );
    const peers = ['estuary', 'estuary-reverse', 'node-http'];
    expect(result.peers.map((p) => `${p.peer} ${p.status}`)).toEqual(peers.map((p) => `${p} ok`));
    const small = order.filter((e) => e.case === '4 KiB cached, 50 conns').map((e) => e.peer);
    expect(small).toEqual([...peers, ...peers]);
    // The reference caches nothing: it has no place in the cold herd.
    expect(order.filter((e) => e.case.startsWith('cold herd')).map((e) => e.peer)).not.toContain('node-http');
    const check = interleavingCheck(order, result.measurements);
    expect(check.problems).toEqual([]);
    // 4 KiB, and the mix in req/s and in MiB/s, and the server CPU per request of both.
    expect(check.cases).toBe(5);
    for (const c of ['4 KiB cached: server CPU per request', 'CVMFS-like mix: server CPU per request']) {
      const cpu = result.measurements.filter((m) => m.case === c);
      expect(cpu.map((m) => m.peer).sort()).toEqual([...peers].sort());
      for (const m of cpu) for (const us of m.samples) expect(us).toBeGreaterThan(0);
    }
    expect(result.reference).toBe('node-http');
    const method = result.method?.join(' ') ?? '';
    expect(method).toMatch(/estuary: forward proxy; --workers 2 .*memory: --mem-cache 256MiB/);
    expect(method).toMatch(/estuary-reverse: reverse proxy; --workers 2/);
    expect(method).toMatch(/node-http is the reference, not a peer/);
    const report = scenarioSection(scenarioRecord(result, { durationSeconds: 1 }), (id) => `${id}.svg`);
    expect(report).toContain('| node-http (reference) | ok |');
    expect(report).toMatch(/estuary-reverse against node-http \(the reference\): 4 KiB cached, 50 conns ([\d.]+× (faster|slower)|level)/);
  }, 120_000);
});
