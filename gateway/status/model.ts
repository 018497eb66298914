// What the gateway's status page says, decided apart from drawing it: the numbers from the
// (cluster-wide) metrics text, the facts only this process knows, and above all the problems an
// operator must read first, in words. Pure: facts in, view out.

import { GATEWAY_METRICS as M, GATEWAY_PRIMARY_METRICS as P } from '../../lib/metric-names.ts';
import { OUTBOX_MAX_BYTES } from '../cluster/outbox.ts';
import { byLabel, type Sample, total } from './prom-text.ts';

export interface StatusFacts {
  readonly now: number;
  readonly startedAt: number;
  readonly mode: 'forward' | 'reverse';
  /** --workers; 0 when the process serves alone (no supervisor). */
  readonly workers: number;
  readonly crashLoopLimit: number;
  readonly crashLoopWindowS: number;
  readonly cacheDir: string;
  /** The process holding the cache directory's lock (the primary), when known. */
  readonly lockHolder?: number;
  readonly memory: { readonly bytes: number; readonly objects: number; readonly max: number };
  readonly disk: {
    readonly bytes: number;
    readonly objects: number;
    readonly max: number;
    readonly full: boolean;
    readonly free?: number;
    /** What its index holds in memory, all workers together. */
    readonly indexBytes: number;
    /** Entry files this process's read of the index has yet to read (counted as objects meanwhile). */
    readonly unread?: number;
    /** Directories (or files) of the cache the read of the index could not read. */
    readonly unindexed?: readonly string[];
    /** Why disk hits are read into each worker rather than mapped from the page cache. */
    readonly unmapped?: string;
  };
  readonly rings: readonly { readonly name: string; readonly servers: readonly string[] }[];
  readonly allowDest: readonly string[];
  /** Ring servers tried last after a recent failure, as any process saw it. */
  readonly downServers: readonly string[];
  /** The last unanswered failure per upstream label, the latest any process saw. */
  readonly lastErrors: ReadonlyMap<string, string>;
  /** Processes whose numbers could not be gathered, each with why; the numbers leave them out. */
  readonly unanswered: readonly string[];
  readonly s3Buckets: readonly string[];
  readonly top: readonly { readonly name: string; readonly bytes: number }[];
  readonly largest: readonly { readonly url: string; readonly bytes: number }[];
}

export interface UpstreamView {
  readonly name: string;
  readonly servers: readonly string[];
  readonly state: 'up' | 'failing' | 'unused';
  readonly lastOkS?: number;
  readonly lastFailS?: number;
  readonly error?: string;
  readonly errors: number;
}

export interface StatusView {
  readonly problems: readonly string[];
  readonly requests: number;
  readonly hits: { readonly memory: number; readonly disk: number };
  readonly misses: number;
  /** Hits over hits + misses, 0..1; undefined before the first cacheable request. */
  readonly hitRatio?: number;
  readonly bytesOut: number;
  readonly bytesIn: number;
  readonly evictions: number;
  readonly restarts: number;
  readonly recentDeaths: number;
  /** Workers ended because they stopped reading what the primary sends them. */
  readonly backlogOverflows: number;
  /** Bytes the primary holds now for the slowest worker. */
  readonly backlog: number;
  readonly guardFired: number;
  readonly s3: readonly { readonly method: string; readonly statusClass: string; readonly n: number }[];
  readonly upstreams: readonly UpstreamView[];
}

/** A worker this far behind its channel is not reading it (one that serves reads it between requests). */
const BACKLOG_WARN = OUTBOX_MAX_BYTES / 8;

/** Below this share of --disk-cache still free on the file system, the disk will fill before the bound. */
const LOW_DISK_SHARE = 0.05;

function upstreams(samples: readonly Sample[], f: StatusFacts): UpstreamView[] {
  const ok = byLabel(samples, M.upstreamLastSuccess, 'upstream');
  const fail = byLabel(samples, M.upstreamLastFailure, 'upstream');
  const errs = byLabel(samples, M.upstreamErrors, 'upstream');
  const names = [...f.rings.map((r) => r.name), ...ok.keys(), ...fail.keys()];
  const servers = new Map(f.rings.map((r) => [r.name, r.servers]));
  return [...new Set(names)].map((name) => {
    const okAt = ok.get(name);
    const failAt = fail.get(name);
    const failing = failAt !== undefined && (okAt === undefined || failAt > okAt);
    return {
      name,
      servers: servers.get(name) ?? [],
      state: failing ? 'failing' : okAt === undefined ? 'unused' : 'up',
      lastOkS: okAt === undefined ? undefined : Math.max(0, f.now / 1000 - okAt),
      lastFailS: failAt === undefined ? undefined : Math.max(0, f.now / 1000 - failAt),
      error: failing ? f.lastErrors.get(name) : undefined,
      errors: errs.get(name) ?? 0,
    };
  });
}

export const bytes = (n: number): string => {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 ? n : n.toFixed(n < 10 ? 1 : 0)} ${units[i]}`;
};

export const ago = (s: number | undefined): string =>
  s === undefined ? 'never' : s < 120 ? `${Math.round(s)} s ago` : s < 7200 ? `${Math.round(s / 60)} min ago` : `${Math.round(s / 3600)} h ago`;

/**
 * How the page names a cached object to any client of --allow-client: an S3 endpoint object by
 * bucket and first segment of its key (as the summary does: the rest of a key may be
 * confidential), any other URL without its query (which may carry a token or a signature).
 */
export function shownUrl(url: string): string {
  if (url.startsWith('s3://')) {
    const m = /^s3:\/\/[^/]+\/[^/]*/.exec(url);
    return m && m[0].length < url.length ? `${m[0]}/…` : url;
  }
  const q = url.indexOf('?');
  return q < 0 ? url : `${url.slice(0, q)}?…`;
}

function problems(v: Omit<StatusView, 'problems'>, f: StatusFacts): string[] {
  const out: string[] = [];
  for (const who of f.unanswered) {
    const stuck = / did not answer /.test(who);
    out.push(
      `Not counted: ${who}. The numbers below leave out what it served.${stuck ? ' A worker this silent is stuck: new connections go to the other workers, its open ones wait for it. Read its log; ending it (kill -9) makes the supervisor start a new one.' : ''}`,
    );
  }
  for (const u of v.upstreams.filter((x) => x.state === 'failing')) {
    out.push(`Upstream ${u.name} is failing${u.error ? `: ${u.error}` : ''} (last answer ${ago(u.lastOkS)}); requests for objects not cached fail.`);
  }
  if (v.recentDeaths > 0) {
    out.push(
      `${v.recentDeaths} worker death${v.recentDeaths > 1 ? 's' : ''} in the last ${f.crashLoopWindowS} s: at ${f.crashLoopLimit} the gateway gives up (ESTUARY_GW_CRASH_LOOP). Read its log for the worker's error.`,
    );
  }
  if (v.backlog > BACKLOG_WARN) {
    out.push(`A worker is not reading what the primary sends it (${bytes(v.backlog)} waiting): at ${bytes(OUTBOX_MAX_BYTES)} it is ended and replaced.`);
  }
  if (v.backlogOverflows > 0) {
    out.push(
      `${v.backlogOverflows} worker${v.backlogOverflows > 1 ? 's' : ''} stopped reading what the primary sends them (over ${bytes(OUTBOX_MAX_BYTES)} waiting) and ${v.backlogOverflows > 1 ? 'were' : 'was'} ended and replaced (${P.workerBacklogOverflows}): a frozen or stuck process; read the log.`,
    );
  }
  const unread = f.disk.unread ?? 0;
  if (unread > 0) {
    out.push(
      `The disk index is still being read after a worker restart (${unread.toLocaleString('en')} files to go): the objects count those files, the bytes only what was read, and objects not read yet are misses meanwhile.`,
    );
  }
  const unindexed = f.disk.unindexed ?? [];
  if (unindexed.length > 0) {
    const shown = unindexed.slice(0, 3).join(', ') + (unindexed.length > 3 ? ` and ${unindexed.length - 3} more` : '');
    out.push(`The cache cannot read ${shown}: what is there is not served, counted or purged. Give the gateway's user read access, or remove it; a purge's answer lists each.`);
  }
  if (f.disk.unmapped !== undefined) {
    out.push(`Disk hits are read into each worker instead of mapped from the page cache, which costs more CPU per hit: ${f.disk.unmapped}.`);
  }
  if (f.disk.full) out.push(`The cache's file system (${f.cacheDir}) is full: new objects pass through unstored. Free space or lower --disk-cache.`);
  else if (f.disk.free !== undefined && f.disk.free < Math.min(f.disk.max - f.disk.bytes, f.disk.max * LOW_DISK_SHARE)) {
    out.push(`Only ${bytes(f.disk.free)} free on the cache's file system, less than --disk-cache still allows (${bytes(f.disk.max - f.disk.bytes)}): the disk fills first.`);
  }
  if (v.guardFired > 0) out.push(`Workers stopped waiting on the cluster ${v.guardFired} times (${M.clusterGuardFired}): the primary is overloaded or stuck.`);
  if (f.mode === 'forward' && f.allowDest.length === 0 && f.rings.length === 0) {
    out.push('No destination is allowed: every proxy request is refused. Start with --allow-dest (e.g. @cvmfs) or --upstream.');
  }
  return out;
}

export function buildStatus(samples: readonly Sample[], f: StatusFacts): StatusView {
  const hits = { memory: total(samples, M.hits, { tier: 'memory' }), disk: total(samples, M.hits, { tier: 'disk' }) };
  const misses = total(samples, M.misses);
  const looked = hits.memory + hits.disk + misses;
  const s3 = samples
    .filter((s) => s.name === M.s3Requests && s.value > 0)
    .map((s) => ({ method: s.labels.method ?? '', statusClass: s.labels.status_class ?? '', n: s.value }));
  const v = {
    requests: total(samples, M.requests),
    hits,
    misses,
    hitRatio: looked === 0 ? undefined : (hits.memory + hits.disk) / looked,
    bytesOut: total(samples, M.bytesOut),
    bytesIn: total(samples, M.bytesIn),
    evictions: total(samples, M.diskEvictions),
    restarts: total(samples, P.workerRestarts),
    recentDeaths: total(samples, P.workerRecentDeaths),
    backlogOverflows: total(samples, P.workerBacklogOverflows),
    backlog: total(samples, P.workerBacklog),
    guardFired: total(samples, M.clusterGuardFired),
    s3,
    upstreams: upstreams(samples, f),
  };
  return { ...v, problems: problems(v, f) };
}
