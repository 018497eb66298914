// The gateway's "hostile origins" case: thousands of distinct loopback origins that behave as
// real servers do on a bad day (bench/gateway/hostile-origin.ts), asked through estuary in
// forward mode with one worker and with two. It reports what a site must never see: a worker that
// died (the supervisor's restart count in /metrics), a complete 200 with wrong bytes, a whole
// body lost on the way, a client left hanging; and what the burst costs: requests/s, and the
// resident memory of the gateway's processes (primary + workers) before, at the peak, and after
// the gateway has been idle long enough to give memory back (gateway/memory-reclaim.ts collects
// 10 to 10.5 s after the last request). Only estuary runs it: the origins are the subject, not a comparison.

import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { oneRound } from '../interleave.ts';
import { startProcess, type BenchChild } from '../proc.ts';
import type { SampleBook } from '../samples.ts';
import type { BenchContext, PeerStatus } from '../scenario.ts';
import { treeMemory } from '../proc.ts';
import { driveHostile, watchPeak } from './hostile-client.ts';
import { type HostileOrigin, startHostileOrigins } from './hostile-origin.ts';
import { waitPort } from './peers.ts';

export interface HostilePlan {
  readonly origins: number;
  /** Listeners per loopback address: origins differ by address and by port. */
  readonly portsPerAddress: number;
  readonly paths: number;
  /** Times every path is asked, each round in a new order. */
  readonly asks: number;
  readonly clients: number;
  /** The gateway's --idle-timeout and --response-timeout: what a hanging origin costs a client. */
  readonly originTimeoutSeconds: number;
  readonly idleSeconds: number;
  readonly workers: readonly number[];
}

export function hostilePlan(ctx: Pick<BenchContext, 'quick' | 'settings'>): HostilePlan {
  const s = ctx.settings;
  const num = (k: string, d: number) => (typeof s[k] === 'number' ? (s[k] as number) : d);
  return {
    origins: num('hostileOrigins', ctx.quick ? 60 : 4000),
    portsPerAddress: ctx.quick ? 2 : 4,
    paths: 1,
    asks: 2,
    clients: ctx.quick ? 16 : 64,
    originTimeoutSeconds: ctx.quick ? 2 : 5,
    // Long enough for the gateway's idle collection (10 to 10.5 s after the last request) to have run.
    idleSeconds: num('hostileIdleSeconds', ctx.quick ? 12 : 30),
    workers: [1, 2],
  };
}

const ESTUARY_BIN = new URL('../../bin/estuary.js', import.meta.url).pathname;
const MB = 1e6;
const ESTUARY_VERSION = (
  (await import('../../package.json', { with: { type: 'json' } })).default as { version: string }
).version;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

interface Gateway {
  readonly name: string;
  readonly port: number;
  readonly child: BenchChild;
  failed?: string;
  before?: number;
  peak?: number;
  hwm?: number;
  endedAt?: number;
}

function gatewayArgs(dir: string, port: number, workers: number, timeoutS: number): string[] {
  return [
    ESTUARY_BIN, 'gateway', '--listen', `127.0.0.1:${port}`, '--cache-dir', join(dir, 'cache'),
    '--allow-dest', '127.0.0.0/8', '--mem-cache', '256MiB', '--mem-object-max', '128MiB',
    '--disk-cache', '4GiB', '--workers', String(workers), '--idle-timeout', `${timeoutS}s`,
    '--response-timeout', `${timeoutS}s`, '--log-level', 'error',
  ];
}

async function startGateway(ctx: BenchContext, workers: number, timeoutS: number): Promise<Gateway> {
  const name = `estuary-w${workers}`;
  const dir = join(ctx.workDir, 'gateway', `hostile-${name}`);
  await mkdir(dir, { recursive: true });
  const port = await freePort();
  ctx.progress(`${name}: starting for hostile origins`);
  const child = startProcess(name, process.execPath, gatewayArgs(dir, port, workers, timeoutS));
  await waitPort(child, port, 30_000);
  return { name, port, child };
}

/** Worker restarts, and the bytes the memory cache holds (all workers), from /metrics. */
async function fromMetrics(port: number): Promise<{ restarts: number; memoryCache: number }> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const m = /^estuary_gateway_worker_restarts_total (\d+)/m.exec(text);
  if (!m) throw new Error('/metrics has no estuary_gateway_worker_restarts_total');
  let memoryCache = 0;
  for (const c of text.matchAll(/^estuary_gateway_cache_bytes\{[^}]*tier="memory"[^}]*\} (\S+)$/gm)) memoryCache += Number(c[1]);
  return { restarts: Number(m[1]), memoryCache };
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

interface Run {
  readonly ctx: BenchContext;
  readonly p: HostilePlan;
  readonly origin: HostileOrigin;
  readonly book: SampleBook;
  readonly notes: string[];
}

const label = (what: string) => `hostile origins: ${what}`;

/** One gateway's drive: its memory around it, and what its clients got. */
async function driveOne(r: Run, g: Gateway): Promise<void> {
  const { p, book } = r;
  r.ctx.progress(`${g.name}: hostile origins, ${p.origins} origins × ${p.asks} asks, ${p.clients} clients`);
  g.before = treeMemory(g.child.pid).rss;
  const watch = watchPeak(g.child.pid);
  const drive = await driveHostile(g.port, r.origin, {
    prefix: `/${g.name}`,
    paths: p.paths,
    asks: p.asks,
    clients: p.clients,
    patienceMs: 60_000,
    signal: r.ctx.signal,
  });
  g.peak = watch.stop();
  g.hwm = treeMemory(g.child.pid).hwm;
  g.endedAt = performance.now();
  const t = drive.tally;
  const add = (what: string, value: number) => book.add({ case: label(what), peer: g.name, metric: 'badAnswers', value });
  book.add({ case: label('requests/s'), peer: g.name, metric: 'requestRate', value: drive.requests / drive.seconds });
  add('wrong bytes in a complete 200', t.wrong);
  add('whole body sent, client cut', t.unexpectedCuts);
  add('whole body sent, client got an error status', t.unexpectedStatus);
  add('hung (no end within 60 s)', t.hung);
  r.notes.push(
    `${g.name} hostile origins: ${drive.requests} requests in ${drive.seconds.toFixed(1)} s: ${t.exact} exact, ${t.wrong} wrong, ` +
      `${t.expectedCuts} cut where the origin cut or lied, ${t.unexpectedCuts} cut where the origin sent everything, ${t.errorStatus} error statuses, ${t.hung} hung`,
  );
  for (const e of t.examples) r.notes.push(`${g.name} wrong bytes: ${e}`);
  const odd = [...t.odd].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${k} ${n}`);
  r.notes.push(`${g.name} answers other than exact bytes, by origin personality: ${odd.join(', ') || 'none'}`);
}

/** Memory once the gateway has been idle `idleSeconds` since its own drive, then /metrics. */
async function afterIdle(r: Run, g: Gateway): Promise<void> {
  const { p, book } = r;
  await sleep(Math.max(0, g.endedAt! + p.idleSeconds * 1000 - performance.now()), r.ctx.signal);
  const after = treeMemory(g.child.pid).rss;
  const add = (what: string, bytes: number) => book.add({ case: label(what), peer: g.name, metric: 'peakMemory', value: bytes / MB });
  add('RSS before', g.before!);
  add('RSS at peak', g.peak!);
  add('VmHWM, sum', g.hwm!);
  add(`RSS after ${p.idleSeconds} s idle`, after);
  if (!g.child.isRunning()) {
    g.failed = `the gateway exited: ${g.child.output().trim().split('\n').at(-1) ?? ''}`;
    return;
  }
  // Read last: a /metrics request is activity, which would put off the idle gateway's reclaim.
  const read = await fromMetrics(g.port);
  add('memory cache held, of the RSS after idle', read.memoryCache);
  book.add({ case: label('worker restarts'), peer: g.name, metric: 'workerRestarts', value: read.restarts });
}

async function startAll(ctx: BenchContext, p: HostilePlan, statuses: PeerStatus[]): Promise<Gateway[]> {
  const gateways: Gateway[] = [];
  for (const w of p.workers) {
    try {
      gateways.push(await startGateway(ctx, w, p.originTimeoutSeconds));
    } catch (err) {
      statuses.push({ peer: `estuary-w${w}`, status: 'failed', reason: `could not start: ${(err as Error).message.split('\n')[0]}` });
    }
  }
  return gateways;
}

async function stopAll(gateways: readonly Gateway[], notes: string[]): Promise<void> {
  for (const g of gateways) {
    const crash = /AssertionError|uncaught|worker.*(died|exited)/i.exec(g.child.output());
    if (crash) notes.push(`${g.name} log: ${g.child.output().slice(crash.index, crash.index + 300).split('\n')[0]}`);
    await g.child.stop('SIGTERM', 5000);
  }
}

/** Runs the case, adds its rows to `book`, returns the peers' statuses. */
export async function hostileCase(ctx: BenchContext, book: SampleBook, notes: string[]): Promise<PeerStatus[]> {
  const p = hostilePlan(ctx);
  ctx.progress(`hostile origins: starting ${p.origins} origins`);
  const origin = await startHostileOrigins(p.origins, p.portsPerAddress);
  const statuses: PeerStatus[] = [];
  const run: Run = { ctx, p, origin, book, notes };
  let gateways: Gateway[] = [];
  try {
    gateways = await startAll(ctx, p, statuses);
    // The settle time lets start-up garbage be collected before "before" is read.
    await sleep(2000, ctx.signal);
    await oneRound(gateways, (g) => driveOne(run, g), { signal: ctx.signal, skip: (g) => g.failed !== undefined });
    for (const g of gateways) if (g.endedAt !== undefined) await afterIdle(run, g);
  } finally {
    await stopAll(gateways, notes);
    await origin.close();
  }
  const version = (g: Gateway) => `${ESTUARY_VERSION}, --workers ${g.name.slice('estuary-w'.length)}`;
  for (const g of gateways)
    statuses.push(g.failed ? { peer: g.name, status: 'failed', reason: g.failed } : { peer: g.name, status: 'ok', version: version(g) });
  notes.push(`hostile origins: answered per personality: ${[...origin.answered].map(([b, n]) => `${b} ${n}`).join(', ')}`);
  return statuses;
}

/** What the case settings say in results.json. */
export function hostileSettings(ctx: Pick<BenchContext, 'quick' | 'settings'>): Record<string, unknown> {
  const p = hostilePlan(ctx);
  return {
    ...p,
    estuary: `forward proxy, --allow-dest 127.0.0.0/8 --mem-cache 256MiB --mem-object-max 128MiB --disk-cache 4GiB --idle-timeout ${p.originTimeoutSeconds}s --response-timeout ${p.originTimeoutSeconds}s, --workers 1 and 2`,
  };
}
