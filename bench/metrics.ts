// Every quantity the bench measures, declared once: its unit, which way is better, and the words a
// ratio uses in each direction. Scenarios name a metric and never say "higher is better" again,
// so a table, a chart and the summary cannot disagree about which way a number points — the
// mistake that had "0.14× s3fs" stand for seven times more memory. Pure: no I/O.

export interface Metric {
  readonly unit: string;
  readonly higherIsBetter: boolean;
  /** How a ratio above 1× reads: "13.6× faster", "7.2× less memory". */
  readonly better: string;
  /** How a ratio below 1× reads, inverted: "1.3× slower", "7.2× more memory". */
  readonly worse: string;
}

const speed = { better: 'faster', worse: 'slower' } as const;

export const METRICS = {
  /** A dataset copied through a mount or the SDK: bytes / seconds, MB = 10^6 bytes. */
  transferRate: { unit: 'MB/s', higherIsBetter: true, ...speed },
  /** Bytes served by a proxy under wrk, in the unit wrk reports. */
  byteRate: { unit: 'MiB/s', higherIsBetter: true, ...speed },
  requestRate: { unit: 'req/s', higherIsBetter: true, ...speed },
  heartbeatRate: { unit: 'heartbeats/s', higherIsBetter: true, ...speed },
  /** Wall-clock time of one operation or batch (metadata steps, a cold herd). */
  duration: { unit: 'seconds', higherIsBetter: false, ...speed },
  latency: { unit: 'ms', higherIsBetter: false, better: 'lower latency', worse: 'higher latency' },
  cpuPerGB: { unit: 'CPU s/GB', higherIsBetter: false, better: 'less CPU', worse: 'more CPU' },
  /** Server CPU (user + system, every process of the server) per request answered under wrk. */
  cpuPerRequest: { unit: 'µs', higherIsBetter: false, better: 'less CPU', worse: 'more CPU' },
  cpuPerHeartbeat: { unit: 'µs', higherIsBetter: false, better: 'less CPU', worse: 'more CPU' },
  cpuPerQuery: { unit: 'ms', higherIsBetter: false, better: 'less CPU', worse: 'more CPU' },
  peakMemory: { unit: 'MB', higherIsBetter: false, better: 'less memory', worse: 'more memory' },
  upstreamFetches: {
    unit: 'fetches',
    higherIsBetter: false,
    better: 'fewer upstream fetches',
    worse: 'more upstream fetches',
  },
  /** Body bytes that crossed the site↔cloud link, as a multiple of the dataset read. */
  linkTraffic: {
    unit: '× dataset',
    higherIsBetter: false,
    better: 'less traffic over the link',
    worse: 'more traffic over the link',
  },
  /** Simulated time (the coordinator bench): makespan. */
  hours: { unit: 'hours', higherIsBetter: false, ...speed },
  /** Simulated time a job waited in the queue. */
  minutes: { unit: 'minutes', higherIsBetter: false, better: 'shorter waits', worse: 'longer waits' },
  /** Cloud cores paid for but running no job (booting, idle, draining). */
  idleCoreHours: { unit: 'idle core-hours', higherIsBetter: false, better: 'less idle', worse: 'more idle' },
  dollars: { unit: 'dollars', higherIsBetter: false, better: 'cheaper', worse: 'more expensive' },
  /** Bytes that crossed a wide-area link (inputs fetched, results sent home), GB = 10^9 bytes. */
  wanGB: { unit: 'GB over the WAN', higherIsBetter: false, better: 'less WAN traffic', worse: 'more WAN traffic' },
  drones: { unit: 'drones started', higherIsBetter: false, better: 'fewer drones', worse: 'more drones' },
  /** Gateway worker processes that died and were restarted (the hostile-origins case). */
  workerRestarts: { unit: 'restarts', higherIsBetter: false, better: 'fewer crashes', worse: 'more crashes' },
  /** Answers of one kind that should not happen: wrong bytes, bodies lost, requests hung. */
  badAnswers: { unit: 'bad answers', higherIsBetter: false, better: 'fewer bad answers', worse: 'more bad answers' },
  exactClients: {
    unit: 'clients',
    higherIsBetter: true,
    better: 'more clients served exact bytes',
    worse: 'fewer clients served exact bytes',
  },
} as const satisfies Record<string, Metric>;

export type MetricName = keyof typeof METRICS;

export function isMetricName(name: string): name is MetricName {
  return Object.hasOwn(METRICS, name);
}

/**
 * The metric a results file names. A file written before metrics were named (schema 1) has only
 * a unit and a direction: the one metric that matches both, else plain "better"/"worse" words,
 * which cannot point the wrong way ("ms" is both latency and CPU per query).
 */
export function metricOf(m: { metric?: string; unit: string; higherIsBetter: boolean }): Metric {
  if (m.metric !== undefined && isMetricName(m.metric)) return METRICS[m.metric];
  const same = Object.values(METRICS).filter(
    (x: Metric) => x.unit === m.unit && x.higherIsBetter === m.higherIsBetter,
  );
  if (same.length === 1) return same[0]!;
  return { unit: m.unit, higherIsBetter: m.higherIsBetter, better: 'better', worse: 'worse' };
}
