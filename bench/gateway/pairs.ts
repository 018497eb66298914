// The comparisons that are fair in the gateway scenario: estuary against the peers that run in its
// own mode (forward: Squid; reverse: nginx, Varnish) and against the node:http reference. The
// report's ratio tables put every column against one baseline (Squid); these lines, in the notes of
// every report, pair each estuary column with the peers of its mode instead. Pure.

import { METRICS } from '../metrics.ts';
import { ratioWords } from '../report/ratio.ts';
import type { Measurement } from '../scenario.ts';
import { median, speedup } from '../stats.ts';
import type { ProxyMode } from './peer-configs.ts';

export interface ModedPeer {
  readonly name: string;
  readonly mode: ProxyMode;
}

/** Cases where one proxy's number against another's says who is faster or cheaper (not counts of fetches). */
const COMPARABLE = new Set(['requestRate', 'byteRate', 'duration', 'cpuPerRequest']);

function medianOf(all: readonly Measurement[], c: string, peer: string): number | undefined {
  const m = all.find((x) => x.case === c && x.peer === peer);
  return m ? median(m.samples) : undefined;
}

/**
 * One line per pair: "estuary-reverse against nginx (both reverse): 4 KiB cached, 50 conns 1.20×
 * slower; …". Subjects are the peers whose name starts with "estuary"; `reference` is compared
 * with each subject whatever its mode.
 */
export function sameModeLines(
  measurements: readonly Measurement[],
  peers: readonly ModedPeer[],
  reference?: string,
): string[] {
  const cases = [...new Set(measurements.filter((m) => COMPARABLE.has(m.metric)).map((m) => m.case))];
  const out: string[] = [];
  for (const subject of peers.filter((p) => p.name.startsWith('estuary'))) {
    const others = peers.filter(
      (p) => !p.name.startsWith('estuary') && (p.mode === subject.mode || p.name === reference),
    );
    for (const other of others) {
      const parts = cases.flatMap((c) => {
        const metric = measurements.find((m) => m.case === c)!.metric;
        const mine = medianOf(measurements, c, subject.name);
        const theirs = medianOf(measurements, c, other.name);
        if (mine === undefined || theirs === undefined) return [];
        const times = speedup(mine, theirs, METRICS[metric].higherIsBetter);
        return times === undefined ? [] : [`${c} ${ratioWords(times, METRICS[metric])}`];
      });
      if (parts.length === 0) continue;
      const how = other.name === reference ? 'the reference' : `both ${subject.mode}`;
      out.push(`${subject.name} against ${other.name} (${how}): ${parts.join('; ')}.`);
    }
  }
  return out;
}
