// The gateway benchmark: estuary's gateway against Squid, nginx proxy_cache and Varnish, each
// started from a template with equivalent settings (bench/gateway/peers.ts), on one loopback
// origin. Cases: a cached 4 KiB object (wrk, 50 connections), a cached 100 MB object (wrk, 4
// connections), a cold herd (N clients at once on one uncached 100 MB object: upstream fetches
// and exact bytes per client), and a CVMFS-like mix of manifests, catalogs and chunks. Ratios
// are computed against Squid, the tool the gateway replaces.

import { chmod, mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { installMissing } from '../install.ts';
import { runCommand } from '../proc.ts';
import type { BenchContext, Measurement, PeerStatus, Scenario, ScenarioResult } from '../scenario.ts';
import { fetchCompare, herd, runWrk, targetFor } from './load.ts';
import { type BenchOrigin, startBenchOrigin } from './origin.ts';
import { PEERS, type PeerSpec, type RunningPeer } from './peers.ts';

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
    repetitions: num('repetitions', ctx.quick ? 1 : 3),
  };
}

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

async function onPath(cmd: string): Promise<boolean> {
  if (cmd.startsWith('/')) return true;
  return (await runCommand('sh', ['-c', `command -v ${cmd}`])).code === 0;
}

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

class Recorder {
  readonly measurements: Measurement[] = [];
  add(c: string, peer: string, unit: string, higherIsBetter: boolean, samples: number[]): void {
    if (samples.length > 0) this.measurements.push({ case: c, peer, unit, higherIsBetter, samples });
  }
}

async function warm(peer: RunningPeer, target: string, body: Buffer): Promise<void> {
  for (let i = 0; i < 2; i++) {
    const r = await fetchCompare(peer, target, body);
    if (!r.ok) throw new Error(`${peer.name} returned wrong bytes (status ${r.status}) for ${target}`);
  }
}

async function measurePeer(
  ctx: BenchContext,
  p: Plan,
  peer: RunningPeer,
  origin: BenchOrigin,
  dir: string,
  rec: Recorder,
  notes: string[],
  haveWrk: boolean,
): Promise<void> {
  const name = peer.name;
  const bigLabel = `${Math.round(p.bigBytes / 1e6)} MB`;
  if (haveWrk) {
    const small = targetFor(peer, origin.port, `/${name}/small`);
    await warm(peer, small, origin.small);
    const rps: number[] = [];
    for (let i = 0; i < p.repetitions && !ctx.signal.aborted; i++) {
      ctx.progress(`${name}: cached 4 KiB, wrk 50 conns, run ${i + 1}/${p.repetitions}`);
      const r = await runWrk(peer, dir, [small], 50, p.seconds);
      if (r.errors) notes.push(`${name} 4 KiB: ${r.errors}`);
      rps.push(r.requestsPerSec);
    }
    rec.add('4 KiB cached, 50 conns', name, 'req/s', true, rps);
    const big = targetFor(peer, origin.port, `/${name}/big`);
    await warm(peer, big, origin.big);
    const mibs: number[] = [];
    for (let i = 0; i < p.repetitions && !ctx.signal.aborted; i++) {
      ctx.progress(`${name}: cached ${bigLabel}, wrk 4 conns, run ${i + 1}/${p.repetitions}`);
      const r = await runWrk(peer, dir, [big], 4, p.seconds);
      if (r.errors) notes.push(`${name} ${bigLabel}: ${r.errors}`);
      mibs.push(r.mibPerSec);
    }
    rec.add(`${bigLabel} cached, 4 conns`, name, 'MiB/s', true, mibs);
  }
  if (ctx.signal.aborted) return;
  ctx.progress(`${name}: cold herd, ${p.herdClients} clients on one ${bigLabel} object`);
  const herdPath = `/${name}/herd/big`;
  const h = await herd(peer, targetFor(peer, origin.port, herdPath), origin.big, p.herdClients);
  const herdCase = `cold herd ${p.herdClients}×${bigLabel}`;
  rec.add(`${herdCase}: upstream fetches`, name, 'fetches', false, [origin.count(herdPath)]);
  rec.add(`${herdCase}: clients with exact bytes`, name, 'clients', true, [h.exact]);
  rec.add(`${herdCase}: seconds`, name, 'seconds', false, [h.seconds]);
  if (!haveWrk || ctx.signal.aborted) return;
  const prefix = `/${name}/cvmfs/repo.example.org`;
  for (const [obj, body] of origin.mix)
    await warm(peer, targetFor(peer, origin.port, `${prefix}/${obj}`), body);
  const mixRps: number[] = [];
  const mixMib: number[] = [];
  for (let i = 0; i < p.repetitions && !ctx.signal.aborted; i++) {
    ctx.progress(`${name}: CVMFS-like mix, wrk 50 conns, run ${i + 1}/${p.repetitions}`);
    const r = await runWrk(peer, dir, mixTargets(peer, origin, prefix), 50, p.seconds);
    if (r.errors) notes.push(`${name} mix: ${r.errors}`);
    mixRps.push(r.requestsPerSec);
    mixMib.push(r.mibPerSec);
  }
  rec.add('CVMFS-like mix, 50 conns', name, 'req/s', true, mixRps);
  rec.add('CVMFS-like mix, 50 conns (bytes)', name, 'MiB/s', true, mixMib);
}

async function runPeer(
  ctx: BenchContext,
  p: Plan,
  spec: PeerSpec,
  origin: BenchOrigin,
  rec: Recorder,
  notes: string[],
  haveWrk: boolean,
): Promise<PeerStatus> {
  if (!(await onPath(spec.command))) {
    const reason = `${spec.command} not on PATH; --install-peers installs the Debian package ${spec.pkg}`;
    return { peer: spec.name, status: 'skipped', reason };
  }
  const dir = join(ctx.workDir, 'gateway', spec.name);
  await mkdir(dir, { recursive: true });
  let peer: RunningPeer;
  try {
    ctx.progress(`${spec.name}: starting`);
    peer = await spec.start(dir, await freePort(), origin.port);
  } catch (err) {
    return {
      peer: spec.name,
      status: 'failed',
      reason: `could not start: ${(err as Error).message.split('\n')[0]}`,
    };
  }
  try {
    await measurePeer(ctx, p, peer, origin, dir, rec, notes, haveWrk);
    return { peer: spec.name, status: 'ok', version: peer.version };
  } catch (err) {
    return {
      peer: spec.name,
      status: 'failed',
      reason: (err as Error).message.split('\n')[0],
      version: peer.version,
    };
  } finally {
    await peer.stop();
  }
}

export const gatewayScenario: Scenario = async (ctx): Promise<ScenarioResult> => {
  const p = plan(ctx);
  const notes: string[] = [];
  if (ctx.installPeers) {
    const pkgs = PEERS.flatMap((s) => (s.pkg ? [{ command: s.command, pkg: s.pkg }] : []));
    notes.push(...(await installMissing([...pkgs, { command: 'wrk', pkg: 'wrk' }], ctx.log)));
  }
  const haveWrk = await onPath('wrk');
  if (!haveWrk) notes.push('wrk not on PATH: throughput cases skipped (--install-peers installs it)');
  // Squid drops privileges to the proxy user, which must reach its cache directory inside ours.
  await mkdir(join(ctx.workDir, 'gateway'), { recursive: true });
  await chmod(ctx.workDir, 0o711);
  await chmod(join(ctx.workDir, 'gateway'), 0o711);
  const origin = await startBenchOrigin(p.smallBytes, p.bigBytes, ctx.quick);
  const rec = new Recorder();
  const peers: PeerStatus[] = [];
  try {
    for (const spec of PEERS) {
      if (ctx.signal.aborted) break;
      peers.push(await runPeer(ctx, p, spec, origin, rec, notes, haveWrk));
    }
  } finally {
    await origin.close();
  }
  return {
    scenario: 'gateway',
    settings: {
      ...p,
      wrk: 'wrk 4.1, 2 threads, same 2 cores as the proxy',
      estuary: 'forward proxy, --workers 2 --mem-cache 256MiB --mem-object-max 128MiB --disk-cache 4GiB',
      squid:
        'forward proxy, cache_mem 256 MB, maximum_object_size_in_memory 128 MB, cache_dir ufs 4096, collapsed_forwarding on',
      nginx: 'reverse, 2 workers, proxy_cache 4g + proxy_cache_lock, upstream keepalive',
      varnish: 'reverse, -s malloc,1G',
      mix: `${ctx.quick ? 24 : 130} objects: manifests (max-age 61), 1 MiB catalogs, 4 KiB–8 MiB chunks, weighted 1/rank`,
    },
    peers,
    measurements: rec.measurements,
    baseline: 'squid',
    notes,
  };
};
