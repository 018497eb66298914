// The notes that pair each estuary column with the peers of its own mode: estuary (forward) with
// Squid only, estuary-reverse with nginx and Varnish only, both with the reference; counts that
// are not speeds (upstream fetches, exact clients) are left out.

import { describe, expect, it } from 'vitest';
import { sameModeLines } from '../../bench/gateway/pairs.ts';
import type { Measurement } from '../../bench/scenario.ts';

const m = (c: string, peer: string, metric: Measurement['metric'], samples: number[]): Measurement => ({
  case: c,
  peer,
  metric,
  samples,
});

const peers = [
  { name: 'estuary', mode: 'forward' as const },
  { name: 'squid', mode: 'forward' as const },
  { name: 'estuary-reverse', mode: 'reverse' as const },
  { name: 'nginx', mode: 'reverse' as const },
  { name: 'node-http', mode: 'reverse' as const },
];

describe('same-mode pairs', () => {
  it('pairs each estuary with its own mode and the reference, from medians', () => {
    const lines = sameModeLines(
      [
        m('4 KiB', 'estuary', 'requestRate', [100, 300, 200]),
        m('4 KiB', 'squid', 'requestRate', [100, 100, 100]),
        m('4 KiB', 'estuary-reverse', 'requestRate', [150]),
        m('4 KiB', 'nginx', 'requestRate', [300]),
        m('4 KiB', 'node-http', 'requestRate', [150]),
        m('herd: seconds', 'estuary-reverse', 'duration', [10]),
        m('herd: seconds', 'nginx', 'duration', [20]),
        m('herd: fetches', 'estuary-reverse', 'upstreamFetches', [1]),
        m('herd: fetches', 'nginx', 'upstreamFetches', [2]),
      ],
      peers,
      'node-http',
    );
    expect(lines).toEqual([
      'estuary against squid (both forward): 4 KiB 2.0× faster.',
      'estuary against node-http (the reference): 4 KiB 1.33× faster.',
      'estuary-reverse against nginx (both reverse): 4 KiB 2.0× slower; herd: seconds 2.0× faster.',
      'estuary-reverse against node-http (the reference): 4 KiB level.',
    ]);
  });
});
