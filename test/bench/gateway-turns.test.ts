// The gateway scenario's own loop, run for real at --quick size with two repetitions: two estuary
// gateways (under two names, so no other proxy needs installing) must take turns in every
// wrk-driven case, as the runner's check sees it from the order the samples arrive in.

import { describe, expect, it } from 'vitest';
import { measureGateway } from '../../bench/gateway/index.ts';
import { estuaryPeer, type PeerSpec } from '../../bench/gateway/peers.ts';
import { interleavingCheck, type SampleOrder } from '../../bench/interleave.ts';
import type { SampleEvent } from '../../bench/samples.ts';
import { createLogger } from '../../lib/log.ts';
import { required } from '../helpers/services.ts';
import { tempDir } from '../helpers/tmp.ts';
import { onPath } from './helpers.ts';

const wrk = required('wrk', onPath('wrk'), 'apt-get install wrk');

/** A second estuary gateway that reports itself under another name. */
const twin: PeerSpec = {
  ...estuaryPeer,
  name: 'estuary-twin',
  async start(dir, port, originPort) {
    return { ...(await estuaryPeer.start(dir, port, originPort)), name: 'estuary-twin' };
  },
};

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
        settings: { runs: 2 },
        sample: (e: SampleEvent) => void order.push({ case: e.case, peer: e.peer }),
      } as Parameters<typeof measureGateway>[0],
      [estuaryPeer, twin],
    );
    expect(result.peers.map((p) => `${p.peer} ${p.status}`)).toEqual(['estuary ok', 'estuary-twin ok']);
    const small = order.filter((e) => e.case === '4 KiB cached, 50 conns').map((e) => e.peer);
    expect(small).toEqual(['estuary', 'estuary-twin', 'estuary', 'estuary-twin']);
    const check = interleavingCheck(order, result.measurements);
    expect(check.problems).toEqual([]);
    // 4 KiB, the big object, and the mix in req/s and in MiB/s.
    expect(check.cases).toBe(4);
    expect(result.method?.join(' ')).toMatch(/wrk/);
  }, 120_000);
});
