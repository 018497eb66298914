// The proxies measured side by side, each started from the templates in peer-configs.ts with the
// same worker count and cache sizes: estuary twice, in forward mode beside Squid (forward proxies
// both) and in reverse mode beside nginx and Varnish (reverse proxies both, which cannot be forward
// proxies), and the bare node:http reference. All on loopback.

import { randomBytes } from 'node:crypto';
import { readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type BenchChild, runCommand, startProcess } from '../proc.ts';
import {
  estuaryArgs,
  nginxConf,
  type ProxyMode,
  squidConf,
  varnishArgs,
  varnishVcl,
  WHOLE_TIER_MEM_CACHE_MIB,
  NGINX_SNDBUF,
  NGINX_SNDBUF_PEER,
  WHOLE_TIER_PEER,
  WORKERS,
} from './peer-configs.ts';

export interface RunningPeer {
  readonly name: string;
  readonly port: number;
  /** 'forward': requests carry absolute URIs; 'reverse': origin-form paths. */
  readonly mode: ProxyMode;
  readonly version: string;
  /** The process whose tree serves (primary, master), for the server CPU each request costs. */
  readonly pid?: number;
  stop(): Promise<void>;
}

export interface PeerSpec {
  readonly name: string;
  /** Command that must be on PATH, and the Debian package that provides it. */
  readonly command: string;
  readonly pkg?: string;
  /** Measured only when --peers names it: a variant for one question, not a peer of every run. */
  readonly onRequest?: boolean;
  start(dir: string, port: number, originPort: number): Promise<RunningPeer>;
}

async function versionOf(cmd: string, args: string[], re: RegExp): Promise<string> {
  const r = await runCommand(cmd, args, { timeoutMs: 5000 });
  return re.exec(r.output)?.[1] ?? 'unknown';
}

function stopper(child: BenchChild): () => Promise<void> {
  return async () => {
    await child.stop('SIGTERM', 5000);
  };
}

export async function waitPort(child: BenchChild, port: number, timeoutMs: number): Promise<void> {
  const { connect } = await import('node:net');
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!child.isRunning()) throw new Error(`exited: ${child.output().trim().split('\n').at(-1) ?? ''}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`did not listen on ${port} within ${timeoutMs} ms: ${child.output().slice(-300)}`);
}

const ESTUARY_BIN = new URL('../../bin/estuary.js', import.meta.url).pathname;

async function estuaryVersion(): Promise<string> {
  const pkg = (await import('../../package.json', { with: { type: 'json' } })).default as { version: string };
  return pkg.version;
}

/**
 * estuary's gateway in `mode`: forward (clients name the origin) or reverse (--upstream). `bin`
 * is this tree's by default; another tree's (another version, another dependency) can be set
 * beside it. `memCacheMib` is its whole memory tier; `onRequest` measures it only when named.
 */
export function estuaryIn(
  name: string,
  mode: ProxyMode,
  bin = ESTUARY_BIN,
  variant: { memCacheMib?: number; onRequest?: boolean } = {},
): PeerSpec {
  return {
    name,
    command: process.execPath,
    onRequest: variant.onRequest,
    async start(dir, port, originPort) {
      const route =
        mode === 'forward'
          ? ['--allow-dest', '127.0.0.1']
          : ['--upstream', `default=http://127.0.0.1:${originPort}`];
      const child = startProcess(`${name} gateway`, process.execPath, [
        bin,
        'gateway',
        ...estuaryArgs(port, join(dir, 'cache'), variant.memCacheMib),
        ...route,
      ]);
      await waitPort(child, port, 30_000);
      return { name, port, mode, version: await estuaryVersion(), pid: child.pid, stop: stopper(child) };
    },
  };
}

/** Forward mode, the way CVMFS clients use a site proxy (CVMFS_HTTP_PROXY); Squid's peer. */
export const estuaryPeer = estuaryIn('estuary', 'forward');
/** Reverse mode, in front of the origin as nginx and Varnish are. */
export const estuaryReversePeer = estuaryIn('estuary-reverse', 'reverse');
/** Reverse mode with each worker holding the others' whole memory tier: measured only when named. */
export const estuaryWholeTierPeer = estuaryIn(WHOLE_TIER_PEER, 'reverse', ESTUARY_BIN, {
  memCacheMib: WHOLE_TIER_MEM_CACHE_MIB,
  onRequest: true,
});

/**
 * Squid in SMP mode. `--foreground` keeps the master attached and lets it fork its kids (`-N`
 * would run one process and no kids: `squid -h`). A service name of its own (`-n`) keeps its
 * shared memory segments (/dev/shm/NAME-*.shm) and IPC sockets (/run/squid/NAME-*.ipc) apart from
 * any other Squid on the machine: Squid names both after the service (src/ipc/Port.cc,
 * src/ipc/mem/Segment.cc in 5.7).
 */
export const squidPeer: PeerSpec = {
  name: 'squid',
  command: 'squid',
  pkg: 'squid',
  async start(dir, port) {
    const cacheDir = join(dir, 'cache');
    await mkdir(cacheDir, { recursive: true });
    const conf = join(dir, 'squid.conf');
    await writeFile(conf, squidConf({ port, dir, cacheDir }));
    await runCommand('chown', ['-R', 'proxy:proxy', dir]);
    const service = `estuarybench${randomBytes(4).toString('hex')}`;
    const base = ['-f', conf, '-n', service, '--foreground'];
    const init = await runCommand('squid', [...base, '-z'], { timeoutMs: 60_000 });
    if (init.code !== 0) throw new Error(`squid -z failed: ${init.output.slice(-300)}`);
    const child = startProcess('squid', 'squid', [...base, '-d1']);
    const stop = async () => {
      await child.stop('SIGTERM', 10_000);
      await removeSquidLeftovers(service);
    };
    try {
      await waitPort(child, port, 30_000);
    } catch (err) {
      await stop();
      throw err;
    }
    const version = await versionOf('squid', ['-v'], /Version (\S+)/);
    return { name: 'squid', port, mode: 'forward', version, pid: child.pid, stop };
  },
};

/** Squid unlinks its shared memory on a clean exit but leaves its IPC sockets behind. */
async function removeSquidLeftovers(service: string): Promise<void> {
  for (const dir of ['/run/squid', '/dev/shm']) {
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const n of names.filter((x) => x.startsWith(`${service}-`))) await rm(join(dir, n), { force: true });
  }
}

function nginxIn(name: string, sndbuf?: string): PeerSpec {
  return {
    name,
    command: 'nginx',
    pkg: 'nginx',
    onRequest: sndbuf !== undefined,
    async start(dir, port, originPort) {
      await mkdir(join(dir, 'cache'), { recursive: true });
      await mkdir(join(dir, 'tmp'), { recursive: true });
      const conf = join(dir, 'nginx.conf');
      await writeFile(conf, nginxConf({ port, originPort, dir, sndbuf }));
      const child = startProcess(name, 'nginx', ['-c', conf, '-p', dir]);
      await waitPort(child, port, 20_000);
      const version = await versionOf('nginx', ['-v'], /nginx\/(\S+)/);
      return { name, port, mode: 'reverse', version, pid: child.pid, stop: stopper(child) };
    },
  };
}

export const nginxPeer = nginxIn('nginx');
/** nginx with estuary's near-client send buffer: measured only when named. */
export const nginxSndbufPeer = nginxIn(NGINX_SNDBUF_PEER, NGINX_SNDBUF);

export const varnishPeer: PeerSpec = {
  name: 'varnish',
  command: 'varnishd',
  pkg: 'varnish',
  async start(dir, port, originPort) {
    const vcl = join(dir, 'default.vcl');
    await writeFile(vcl, varnishVcl(originPort));
    const child = startProcess('varnish', 'varnishd', varnishArgs(port, vcl, join(dir, 'instance')));
    await waitPort(child, port, 30_000);
    const version = await versionOf('varnishd', ['-V'], /varnish-(\S+)/);
    return { name: 'varnish', port, mode: 'reverse', version, pid: child.pid, stop: stopper(child) };
  },
};

export const REFERENCE_PEER = 'node-http';
const REFERENCE_SERVER = new URL('./reference-server.ts', import.meta.url).pathname;

/**
 * The bare node:http server (reference-server.ts) as a column: a yardstick for what Node's HTTP
 * server costs, not a proxy. Its bodies are the origin's, built from the same recipes.
 */
export function referencePeer(sizes: { small: number; big: number; quick: boolean }): PeerSpec {
  return {
    name: REFERENCE_PEER,
    command: process.execPath,
    async start(_dir, port) {
      const child = startProcess(REFERENCE_PEER, process.execPath, [
        REFERENCE_SERVER,
        String(port),
        String(sizes.small),
        String(sizes.big),
        sizes.quick ? '1' : '0',
        String(WORKERS),
      ]);
      await waitPort(child, port, 20_000);
      const version = process.versions.node;
      return { name: REFERENCE_PEER, port, mode: 'reverse', version, pid: child.pid, stop: stopper(child) };
    },
  };
}

/** The peers, forward before reverse, so each mode's columns stand together. */
export const PEERS: readonly PeerSpec[] = [
  estuaryPeer,
  squidPeer,
  estuaryReversePeer,
  estuaryWholeTierPeer,
  nginxPeer,
  nginxSndbufPeer,
  varnishPeer,
];

/** The peers a run measures: those --peers names, or (without it) all but the on-request ones. */
export function chosenPeers(specs: readonly PeerSpec[], wanted: readonly string[] | undefined): PeerSpec[] {
  return specs.filter((s) => (wanted ? wanted.includes(s.name) : !s.onRequest));
}
