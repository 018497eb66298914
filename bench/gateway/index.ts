// The gateway benchmark: estuary's gateway against Squid, nginx proxy_cache and Varnish, each
// started with the same worker count and cache sizes (bench/gateway/peer-configs.ts) in front of
// one loopback origin: estuary in forward mode beside Squid (forward proxies both) and in reverse
// mode (estuary-reverse) beside nginx and Varnish, plus a bare node:http server (node-http) as the
// reference line. Cases: a cached 4 KiB object (wrk, 50 connections), a cached 100 MB object
// (wrk, 4 connections), a cold herd (N clients at once on one uncached 100 MB object: upstream
// fetches and exact bytes per client), and a CVMFS-like mix of manifests, catalogs and chunks.
// Ratios are computed against Squid, the tool the gateway replaces; the notes pair each estuary
// with the peers of its own mode (pairs.ts). All proxies run at once and take turns: each
// repetition of a case visits every proxy before the next repetition starts. A fifth case,
// hostile origins (bench/gateway/hostile.ts), runs estuary alone with one and two workers against
// thousands of misbehaving origins. `--cases` picks cases (bench/gateway/cases.ts).

import { chmod, mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { installMissing } from '../install.ts';
import { oneRound, takeTurns } from '../interleave.ts';
import type { MetricName } from '../metrics.ts';
import { runCommand, treeCpuSeconds } from '../proc.ts';
import { SampleBook } from '../samples.ts';
import type { BenchContext, PeerStatus, Scenario, ScenarioResult } from '../scenario.ts';
import { gatewayCaseWanted, type GatewayCase } from './cases.ts';
import { hostileCase, hostileSettings } from './hostile.ts';
import { fetchCompare, herd, runWrk, targetFor, type WrkResult } from './load.ts';
import { type BenchOrigin, startBenchOrigin } from './origin.ts';
import { describeSetup, SETUPS, WORKERS } from './peer-configs.ts';
import { sameModeLines } from './pairs.ts';
import { chosenPeers, PEERS, REFERENCE_PEER, referencePeer, type PeerSpec, type RunningPeer } from './peers.ts';

interface Plan {
  readonly smallBytes: number;
  readonly bigBytes: number;
  readonly herdClients: number;
  readonly seconds: number;
  readonly repetitions: number;
}

function plan(ctx: BenchContext): Plan {
  const s = ctx.settings;
  const num = (k: string, d: number) => (typeof s[k] === 'number' ? (s[k] as number) : d);
  return {
    smallBytes: 4096,
    // Quick mode keeps every case but shrinks the big object and the herd so CI smoke runs fast.
    bigBytes: num('bigBytes', ctx.quick ? 8 * 2 ** 20 : 100_000_000),
    herdClients: num('herdClients', ctx.quick ? 20 : 1000),
    seconds: num('seconds', ctx.quick ? 1 : 10),
    // --runs, as for every scenario; `repetitions` is the name it has in the settings written.
    repetitions: num('runs', ctx.quick ? 1 : 3),
  };
}

/** A port the kernel just handed out on loopback, free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function onPath(cmd: string): Promise<boolean> {
  if (cmd.startsWith('/')) return true;
  return (await runCommand('sh', ['-c', `command -v ${cmd}`])).code === 0;
}

/**
 * Server CPU per request: user + system time of every process of the server over a wrk run,
 * divided by the requests wrk counted. On a machine that other work keeps busy, request rates
 * measure the scheduler's shares as much as the servers; this is the servers' own cost.
 */
const CPU_SMALL = '4 KiB cached: server CPU per request';
const CPU_MIX = 'CVMFS-like mix: server CPU per request';

/** Weighted CVMFS-like request mix: manifests and catalogs hot, chunks following a 1/rank tail. */
function mixTargets(peer: RunningPeer, origin: BenchOrigin, prefix: string): string[] {
  const out: string[] = [];
  let rank = 0;
  for (const name of origin.mix.keys()) {
    const t = targetFor(peer, origin.port, `${prefix}/${name}`);
    const weight = name.startsWith('.cvmfs')
      ? 20
      : name.startsWith('catalog')
        ? 10
        : Math.max(1, Math.floor(20 / ++rank));
    for (let i = 0; i < weight; i++) out.push(t);
  }
  return out;
}

/** A peer started for the whole scenario; `failed` takes it out of the remaining turns. */
interface Contender {
  readonly peer: RunningPeer;
  failed?: string;
}

/** Runs `step`; a throw marks the peer failed with the reason instead of ending the scenario. */
async function guarded(c: Contender, what: string, step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch (err) {
    c.failed = `${what}: ${(err as Error).message.split('\n')[0]}`;
  }
}

async function warm(peer: RunningPeer, target: string, body: Buffer): Promise<void> {
  for (let i = 0; i < 2; i++) {
    const r = await fetchCompare(peer, target, body);
    if (!r.ok) throw new Error(`${peer.name} returned wrong bytes (status ${r.status}) for ${target}`);
  }
}

interface Measuring {
  readonly ctx: BenchContext;
  readonly p: Plan;
  readonly origin: BenchOrigin;
  readonly book: SampleBook;
  readonly notes: string[];
  readonly contenders: Contender[];
}

/**
 * One case driven by wrk, every peer in turn per repetition (bench/interleave.ts): warm each
 * peer's object twice, then repetition 1 for every peer, repetition 2 for every peer, ...
 */
async function wrkCase(
  m: Measuring,
  label: string,
  targets: (peer: RunningPeer) => { warm: [string, Buffer][]; load: string[] },
  connections: number,
  /** `cpuUs`: the server's CPU per request in that run (all its processes), when its PID is known. */
  record: (peer: string, r: WrkResult, cpuUs: number | undefined) => void,
): Promise<void> {
  const turns = { signal: m.ctx.signal, skip: (c: Contender) => c.failed !== undefined };
  await oneRound(
    m.contenders,
    (c) =>
      guarded(c, `warming ${label}`, async () => {
        for (const [target, body] of targets(c.peer).warm) await warm(c.peer, target, body);
      }),
    turns,
  );
  await takeTurns(
    m.p.repetitions,
    m.contenders,
    (c, run) =>
      guarded(c, label, async () => {
        m.ctx.progress(`${c.peer.name}: ${label}, wrk ${connections} conns, run ${run}/${m.p.repetitions}`);
        const dir = join(m.ctx.workDir, 'gateway', c.peer.name);
        const pid = c.peer.pid;
        const cpuBefore = pid === undefined ? 0 : treeCpuSeconds(pid);
        const r = await runWrk(c.peer, dir, targets(c.peer).load, connections, m.p.seconds);
        if (r.errors) m.notes.push(`${c.peer.name} ${label}: ${r.errors}`);
        const cpuUs =
          pid === undefined || r.requests === 0 ? undefined : ((treeCpuSeconds(pid) - cpuBefore) * 1e6) / r.requests;
        record(c.peer.name, r, cpuUs);
      }),
    turns,
  );
}

/**
 * N clients at once on one uncached object, every proxy once: a cold cache has no repetition, and
 * the reference, which caches nothing and has everything, has no part in it.
 */
async function herdCase(m: Measuring, bigLabel: string): Promise<void> {
  const herdCase = `cold herd ${m.p.herdClients}×${bigLabel}`;
  await oneRound(
    m.contenders.filter((c) => c.peer.name !== REFERENCE_PEER),
    (c) =>
      guarded(c, 'cold herd', async () => {
        const name = c.peer.name;
        m.ctx.progress(`${name}: cold herd, ${m.p.herdClients} clients on one ${bigLabel} object`);
        const path = `/${name}/herd/big`;
        const target = targetFor(c.peer, m.origin.port, path);
        const h = await herd(c.peer, target, m.origin.big, m.p.herdClients, m.ctx.signal);
        if (m.ctx.signal.aborted) throw new Error(`interrupted after ${Math.round(h.seconds)} s`);
        const add = (suffix: string, metric: MetricName, value: number) =>
          m.book.add({ case: `${herdCase}: ${suffix}`, peer: name, metric, value });
        add('upstream fetches', 'upstreamFetches', m.origin.count(path));
        add('clients with exact bytes', 'exactClients', h.exact);
        // A time is only a time to serve the herd when the whole herd was served.
        if (h.exact === m.p.herdClients) add('seconds', 'duration', h.seconds);
        else
          m.notes.push(
            `${name} cold herd: ${h.exact} of ${m.p.herdClients} clients got the exact bytes after ${Math.round(h.seconds)} s; no time recorded`,
          );
      }),
    { signal: m.ctx.signal, skip: (c) => c.failed !== undefined },
  );
}

async function measureAll(m: Measuring, haveWrk: boolean): Promise<void> {
  const { origin, book } = m;
  const want = (c: GatewayCase) => gatewayCaseWanted(m.ctx.settings.cases, c);
  const bigLabel = `${Math.round(m.p.bigBytes / 1e6)} MB`;
  const own = (peer: RunningPeer, path: string) => targetFor(peer, origin.port, `/${peer.name}${path}`);
  if (haveWrk && want('cached-small'))
    await wrkCase(
      m,
      'cached 4 KiB',
      (peer) => ({ warm: [[own(peer, '/small'), origin.small]], load: [own(peer, '/small')] }),
      50,
      (peer, r, cpuUs) => {
        book.add({ case: '4 KiB cached, 50 conns', peer, metric: 'requestRate', value: r.requestsPerSec });
        if (cpuUs !== undefined) book.add({ case: CPU_SMALL, peer, metric: 'cpuPerRequest', value: cpuUs });
      },
    );
  if (haveWrk && want('cached-big') && !m.ctx.signal.aborted)
    await wrkCase(
      m,
      `cached ${bigLabel}`,
      (peer) => ({ warm: [[own(peer, '/big'), origin.big]], load: [own(peer, '/big')] }),
      4,
      (peer, r) => book.add({ case: `${bigLabel} cached, 4 conns`, peer, metric: 'byteRate', value: r.mibPerSec }),
    );
  if (m.ctx.signal.aborted) return;
  if (want('herd')) await herdCase(m, bigLabel);
  if (!haveWrk || !want('mix') || m.ctx.signal.aborted) return;
  const prefix = '/cvmfs/repo.example.org';
  await wrkCase(
    m,
    'CVMFS-like mix',
    (peer) => ({
      warm: [...origin.mix].map(([obj, body]): [string, Buffer] => [own(peer, `${prefix}/${obj}`), body]),
      load: mixTargets(peer, origin, `/${peer.name}${prefix}`),
    }),
    50,
    (peer, r, cpuUs) => {
      book.add({ case: 'CVMFS-like mix, 50 conns', peer, metric: 'requestRate', value: r.requestsPerSec });
      book.add({ case: 'CVMFS-like mix, 50 conns (bytes)', peer, metric: 'byteRate', value: r.mibPerSec });
      if (cpuUs !== undefined) book.add({ case: CPU_MIX, peer, metric: 'cpuPerRequest', value: cpuUs });
    },
  );
}

/** Starts a peer, or says why it is skipped or failed. */
async function startPeer(
  ctx: BenchContext,
  spec: PeerSpec,
  originPort: number,
): Promise<RunningPeer | PeerStatus> {
  if (!(await onPath(spec.command))) {
    const reason = `${spec.command} not on PATH; --install-peers installs the Debian package ${spec.pkg}`;
    return { peer: spec.name, status: 'skipped', reason };
  }
  const dir = join(ctx.workDir, 'gateway', spec.name);
  await mkdir(dir, { recursive: true });
  try {
    ctx.progress(`${spec.name}: starting`);
    return await spec.start(dir, await freePort(), originPort);
  } catch (err) {
    return {
      peer: spec.name,
      status: 'failed',
      reason: `could not start: ${(err as Error).message.split('\n')[0]}`,
    };
  }
}

export interface GatewayOptions {
  /** Run the hostile-origins case when the cases chosen include it. */
  readonly hostile?: boolean;
  /** Add the bare node:http reference line to the wrk-driven cases. */
  readonly reference?: boolean;
}

/**
 * The scenario over a given set of peers: all are started first and stay up, so that every
 * repetition can visit each in turn; each is stopped at the end, also on failure. The hostile
 * case starts gateways of its own, so it runs only when asked for (`hostile`). The reference
 * runs whatever `--peers` names, as the fuse scenario's does.
 */
export async function measureGateway(
  ctx: BenchContext,
  specs: readonly PeerSpec[],
  options: GatewayOptions = {},
): Promise<ScenarioResult> {
  const p = plan(ctx);
  const notes: string[] = [];
  const wanted = Array.isArray(ctx.settings.peers) ? (ctx.settings.peers as string[]) : undefined;
  const only = (c: GatewayCase) =>
    (c !== 'hostile' || options.hostile === true) && gatewayCaseWanted(ctx.settings.cases, c);
  const anyShared = (['cached-small', 'cached-big', 'herd', 'mix'] as const).some(only);
  const anyWrk = (['cached-small', 'cached-big', 'mix'] as const).some(only);
  const reference =
    options.reference && anyWrk
      ? referencePeer({ small: p.smallBytes, big: p.bigBytes, quick: ctx.quick })
      : undefined;
  // The hostile case starts gateways of its own; the shared proxies run only for the other cases.
  const chosen = [
    ...(anyShared ? chosenPeers(specs, wanted) : []),
    ...(reference ? [reference] : []),
  ];
  if (ctx.installPeers) {
    const pkgs = chosen.flatMap((s) => (s.pkg ? [{ command: s.command, pkg: s.pkg }] : []));
    notes.push(...(await installMissing([...pkgs, { command: 'wrk', pkg: 'wrk' }], ctx.log)));
  }
  const haveWrk = await onPath('wrk');
  if (!haveWrk) notes.push('wrk not on PATH: throughput cases skipped (--install-peers installs it)');
  // Squid drops privileges to the proxy user, which must reach its cache directory inside ours.
  await mkdir(join(ctx.workDir, 'gateway'), { recursive: true });
  await chmod(ctx.workDir, 0o711);
  await chmod(join(ctx.workDir, 'gateway'), 0o711);
  const origin = await startBenchOrigin(p.smallBytes, p.bigBytes, ctx.quick);
  const book = new SampleBook(ctx);
  const statuses: PeerStatus[] = [];
  const contenders: Contender[] = [];
  try {
    for (const spec of chosen) {
      if (ctx.signal.aborted) break;
      const started = await startPeer(ctx, spec, origin.port);
      if ('status' in started) statuses.push(started);
      else contenders.push({ peer: started });
    }
    if (anyShared) await measureAll({ ctx, p, origin, book, notes, contenders }, haveWrk);
    if (only('hostile') && (!wanted || wanted.includes('estuary')) && !ctx.signal.aborted)
      statuses.push(...(await hostileCase(ctx, book, notes)));
  } finally {
    for (const c of contenders) await c.peer.stop();
    await origin.close();
  }
  for (const c of contenders)
    statuses.push(
      c.failed
        ? { peer: c.peer.name, status: 'failed', reason: c.failed, version: c.peer.version }
        : { peer: c.peer.name, status: 'ok', version: c.peer.version },
    );
  const order = [...chosen.map((s) => s.name), 'estuary-w1', 'estuary-w2'];
  statuses.sort((a, b) => order.indexOf(a.peer) - order.indexOf(b.peer));
  const measurements = book.measurements();
  const moded = contenders.map((c) => ({ name: c.peer.name, mode: c.peer.mode }));
  notes.push(...sameModeLines(measurements, moded, reference?.name));
  const setups = chosen.flatMap((s) => (SETUPS[s.name] ? [describeSetup(s.name, SETUPS[s.name])] : []));
  return {
    scenario: 'gateway',
    settings: {
      ...p,
      wrk: 'wrk 4.1, 2 threads, same 2 cores as the proxy',
      peers: Object.fromEntries(chosen.flatMap((s) => (SETUPS[s.name] ? [[s.name, SETUPS[s.name]]] : []))),
      mix: `${ctx.quick ? 24 : 130} objects: manifests (max-age 61), 1 MiB catalogs, 4 KiB–8 MiB chunks, weighted 1/rank`,
      ...(only('hostile') ? { hostile: hostileSettings(ctx) } : {}),
    },
    peers: statuses,
    measurements,
    baseline: 'squid',
    ...(reference ? { reference: reference.name } : {}),
    method: [
      `Every proxy runs from start to end on loopback in front of one origin; each case warms each proxy's own copy of the object twice, then measures.`,
      `Cached cases: wrk (2 threads) for ${p.seconds} s per run against an object already cached; req/s and MiB/s as wrk reports them, errors in the notes.`,
      `Cold herd: ${p.herdClients} clients at once on one uncached object, once per proxy; every client's bytes are compared with the origin's, and the origin counts the fetches that reached it.`,
      'wrk, the proxies and the origin share the machine\'s cores, as they would not in production.',
      'Server CPU per request (4 KiB and the mix): user + system seconds of every process of the server (primary or master, workers, their threads) from /proc/PID/stat over each wrk run, divided by the requests wrk counted; a machine busy with other work changes it far less than the request rates.',
      ...setups.map((line) => `${line}.`),
      ...(reference ? [REFERENCE_METHOD] : []),
      'Ratios in the tables are against Squid, whatever the mode; the notes pair each estuary with the peers of its own mode (forward: Squid; reverse: nginx, Varnish) and with the reference.',
      ...(only('hostile') ? HOSTILE_METHOD : []),
    ],
    notes,
  };
}

const REFERENCE_METHOD = `${REFERENCE_PEER} is the reference, not a peer: a bare node:http server with ${WORKERS} node:cluster workers, as estuary's, answering the same bytes and headers from memory in the cached cases and the mix (not in the cold herd: it caches nothing). The gap between it and estuary is what the gateway's own code costs on top of Node's HTTP server.`;

const HOSTILE_METHOD = [
  'Hostile origins: estuary alone (estuary-w1: --workers 1, estuary-w2: --workers 2), each a fresh gateway in forward mode, one after the other, against the same origins: one listener per origin on 127.77.x.y addresses and ephemeral ports, each with one personality (HTTP/1.0 ended by close or with Content-Length, Connection: close with chunks, keep-alive closing idle sockets at random, stalls that resume, a Content-Length too long or too short, resets mid-body, a rare hang), bodies 0 B–1 MiB around the 64/128 KiB boundaries, every path asked twice in shuffled rounds.',
  'Every 200 that ends cleanly is checked by SHA-256 against the origin\'s body; one with other bytes (a short body passed on as complete included) is a wrong answer. A cut connection is right where the origin cut, lied or hung, and a lost body where it sent everything.',
  'Memory is the sum of VmRSS over the primary and its workers (/proc/PID/status): before the load, the highest sum sampled every 250 ms during it, the sum of each process\'s VmHWM after it, and once the gateway has been idle for the stated time since its own load ended. Restarts are estuary_gateway_worker_restarts_total from /metrics, read last.',
];

export const gatewayScenario: Scenario = (ctx) => measureGateway(ctx, PEERS, { hostile: true, reference: true });
