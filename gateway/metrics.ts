// Prometheus metrics for /metrics, named in lib/metric-names.ts. A registry per gateway (not the
// global one) so tests can run several gateways in one process.

import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { GATEWAY_METRICS as N } from '../lib/metric-names.ts';

/** Methods counted under their own name; RFC 9110's and WebDAV's common ones. */
const KNOWN_METHODS = new Set([
  'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'CONNECT', 'TRACE',
  'PROPFIND', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK', 'REPORT', 'SEARCH',
]);

export interface CacheSizes {
  memoryBytes(): number;
  memoryObjects(): number;
  diskBytes(): number;
  diskObjects(): number;
  /** Every process keeps its own index of the disk tier: each reports its own. */
  diskIndexBytes(): number;
  /** Entry files this process's read of the index has not taken into it yet (0 once it is whole). */
  diskUnread?(): number;
  /** Address space of bodies mapped from the page cache (cache/mapped-bodies.ts). */
  diskMapped?(): number;
  /** Why disk hits are read rather than mapped, or undefined. */
  mappingUnavailable?(): string | undefined;
}

/** A counter bumped on the hot path: a plain number, copied into its Prometheus counter when scraped. */
export interface Tally {
  inc(n?: number): void;
}

function tally(): Tally & { value: number } {
  const t = {
    value: 0,
    inc(n = 1) {
      t.value += n;
    },
  };
  return t;
}

/**
 * prom-client hashes and validates the label set on every inc(), which costs more than serving a
 * small cached object; the per-request counters are therefore plain numbers that each counter's
 * collect() copies in at scrape time (and the cluster aggregator sees through the same collect()).
 */
export class Metrics {
  readonly registry = new Registry();
  readonly requests: Counter<'method' | 'status_class'>;
  readonly hits: Counter<'tier'>;
  readonly misses: Counter;
  readonly collapsed: Counter;
  readonly bytesOut = tally();
  readonly bytesIn = tally();
  readonly upstreamErrors: Counter<'upstream' | 'reason'>;
  readonly upstreamLatency: Histogram<'upstream'>;
  readonly verifyFailures: Counter;
  readonly guardFired: Counter<'guard'>;
  readonly s3Requests: Counter<'method' | 'status_class'>;
  readonly upstreamLastSuccess: Gauge<'upstream'>;
  readonly upstreamLastFailure: Gauge<'upstream'>;
  readonly memoryHit = tally();
  /** Memory hits the front reader answered (a part of memoryHit). */
  readonly frontHit = tally();
  readonly diskHit = tally();
  /** Requests answered, all kinds together. */
  answered = 0;
  /** Set by the owners of what these report; zero until then. */
  upstreamPools: () => number = () => 0;
  memoryReclaims: () => number = () => 0;
  diskEvictions: () => number = () => 0;
  readonly #byStatus = new Map<string, Map<number, { method: string; statusClass: string; n: number }>>();

  constructor(sizes: CacheSizes) {
    const registers = [this.registry];
    const byStatus = this.#byStatus;
    const { memoryHit, diskHit, bytesOut, bytesIn, frontHit } = this;
    const pools = () => this.upstreamPools();
    const reclaims = () => this.memoryReclaims();
    const evictions = () => this.diskEvictions();
    this.requests = new Counter({
      name: N.requests,
      help: 'Requests answered',
      labelNames: ['method', 'status_class'],
      registers,
      collect() {
        this.reset();
        for (const statuses of byStatus.values())
          for (const r of statuses.values()) this.inc({ method: r.method, status_class: r.statusClass }, r.n);
      },
    });
    this.hits = new Counter({
      name: N.hits,
      help: 'Requests answered from the cache',
      labelNames: ['tier'],
      registers,
      collect() {
        this.reset();
        this.inc({ tier: 'memory' }, memoryHit.value);
        this.inc({ tier: 'disk' }, diskHit.value);
      },
    });
    new Counter({
      name: N.frontHits,
      help: "Memory hits answered before Node's HTTP server read them (part of the hits)",
      registers,
      collect() {
        this.reset();
        this.inc(frontHit.value);
      },
    });
    this.misses = new Counter({ name: N.misses, help: 'Requests that had to go upstream', registers });
    this.collapsed = new Counter({
      name: N.collapsed,
      help: 'Requests that joined an upstream fetch already in flight',
      registers,
    });
    new Counter({
      name: N.bytesOut,
      help: 'Body bytes sent to clients',
      registers,
      collect() {
        this.reset();
        this.inc(bytesOut.value);
      },
    });
    new Counter({
      name: N.bytesIn,
      help: 'Body bytes received from upstreams',
      registers,
      collect() {
        this.reset();
        this.inc(bytesIn.value);
      },
    });
    this.upstreamErrors = new Counter({
      name: N.upstreamErrors,
      help: 'Failed upstream attempts',
      labelNames: ['upstream', 'reason'],
      registers,
    });
    this.upstreamLatency = new Histogram({
      name: N.upstreamLatency,
      help: 'Time to upstream response headers, seconds',
      labelNames: ['upstream'],
      buckets: [0.001, 0.005, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.verifyFailures = new Counter({
      name: N.verifyFailures,
      help: 'Content-addressed objects refused because their bytes did not match their name',
      registers,
    });
    this.guardFired = new Counter({
      name: N.clusterGuardFired,
      help: 'Times a worker stopped waiting on the cluster (claim: no answer; follow: the leader went silent; invalidate: the primary did not confirm a write)',
      labelNames: ['guard'],
      registers,
    });
    for (const guard of ['claim', 'follow']) this.guardFired.inc({ guard }, 0);
    this.s3Requests = new Counter({
      name: N.s3Requests,
      help: 'Requests answered by the S3 endpoint',
      labelNames: ['method', 'status_class'],
      registers,
    });
    new Counter({
      name: N.diskEvictions,
      help: 'Disk objects removed to make room',
      registers,
      collect() {
        this.reset();
        this.inc(evictions());
      },
    });
    // Summed over workers, a timestamp would mean nothing: the cluster aggregator takes the latest.
    this.upstreamLastSuccess = new Gauge({
      name: N.upstreamLastSuccess,
      help: 'Unix time of the last answer from an upstream',
      labelNames: ['upstream'],
      aggregator: 'max',
      registers,
    });
    this.upstreamLastFailure = new Gauge({
      name: N.upstreamLastFailure,
      help: 'Unix time of the last failed attempt to reach an upstream',
      labelNames: ['upstream'],
      aggregator: 'max',
      registers,
    });
    new Gauge({
      name: N.cacheBytes,
      help: 'Bytes held in the cache',
      labelNames: ['tier'],
      registers,
      collect() {
        this.set({ tier: 'memory' }, sizes.memoryBytes());
        this.set({ tier: 'disk' }, sizes.diskBytes());
      },
    });
    new Gauge({
      name: N.upstreamPools,
      help: 'Upstream connection pools held, one per origin with open connections or requests',
      registers,
      collect() {
        this.set(pools());
      },
    });
    new Counter({
      name: N.memoryReclaims,
      help: 'Memory-reducing collections run while idle after a burst',
      registers,
      collect() {
        this.reset();
        this.inc(reclaims());
      },
    });
    new Gauge({
      name: N.cacheObjects,
      help: 'Objects held in the cache',
      labelNames: ['tier'],
      registers,
      collect() {
        this.set({ tier: 'memory' }, sizes.memoryObjects());
        this.set({ tier: 'disk' }, sizes.diskObjects());
      },
    });
    new Gauge({
      name: N.diskIndexBytes,
      help: "Memory the disk tier's index holds (each entry's key, URL and headers), estimated; every worker holds one",
      registers,
      collect() {
        this.set(sizes.diskIndexBytes());
      },
    });
    new Gauge({
      name: N.diskIndexUnread,
      help: "Entry files on disk that a worker reading its disk index has not taken into it yet (meanwhile they count as objects, their bytes once read); 0 once every index is whole",
      registers,
      collect() {
        this.set(sizes.diskUnread?.() ?? 0);
      },
    });
    new Gauge({
      name: N.diskMappedBytes,
      help: "Address space of disk entries' bodies held mapped from the page cache, summed over the workers (the pages are the page cache's, shared, not the gateway's own memory)",
      registers,
      collect() {
        this.set(sizes.diskMapped?.() ?? 0);
      },
    });
    new Gauge({
      name: N.diskMappingUnavailable,
      help: 'Disk hits are read into the process instead of mapped from the page cache: lib/native was not built (npm rebuild with python3, make and g++)',
      registers,
      aggregator: 'max',
      collect() {
        this.set(sizes.mappingUnavailable?.() === undefined ? 0 : 1);
      },
    });
  }

  request(given: string, status: number): void {
    this.answered++;
    // Clients choose the method: anything unusual shares one label, so series stay bounded. Keyed
    // by method, then status, so counting a request builds no string.
    const method = KNOWN_METHODS.has(given) ? given : 'other';
    let statuses = this.#byStatus.get(method);
    if (!statuses) {
      statuses = new Map();
      this.#byStatus.set(method, statuses);
    }
    let c = statuses.get(status);
    if (!c) {
      c = { method, statusClass: `${Math.floor(status / 100)}xx`, n: 0 };
      statuses.set(status, c);
    }
    c.n++;
  }

  /** Grows while anything happens (requests answered, body bytes either way): read by gateway/memory-reclaim.ts. */
  activity(): number {
    return this.answered + this.bytesIn.value + this.bytesOut.value;
  }

  async text(): Promise<string> {
    return this.registry.metrics();
  }
}
