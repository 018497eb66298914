// The primary of a multi-worker gateway: forks the workers (which share the listening socket),
// keeps the table of fills in flight (key -> the worker fetching it and those following it),
// relays fill events, replicates index changes, aggregates metrics, and stops everything on
// SIGINT/SIGTERM. It serves no requests itself.

import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { Logger } from '../../lib/log.ts';
import { DiskStore, probeWritable } from '../cache/disk-store.ts';
import { gatewayErrors } from '../errors.ts';
import { expandCacheDir } from '../options.ts';
import type { GatewayConfig } from '../server.ts';
import { isToPrimary, type ToPrimary, type ToWorker } from './messages.ts';

interface Claim {
  readonly owner: number;
  readonly followers: Set<number>;
  streaming?: Extract<ToPrimary, { t: 'fill' }>['ev'];
  written: number;
}

export interface ClusterHandle {
  readonly port: number;
  stop(deadline?: AbortSignal): Promise<void>;
}

const TERMINAL = new Set(['done', 'failed', 'pass', 'revalidated']);

export async function startCluster(
  given: GatewayConfig,
  log: Logger,
  logLevel: string,
  logFormat: string,
): Promise<ClusterHandle> {
  const config = { ...given, cacheDir: expandCacheDir(given.cacheDir) };
  try {
    await probeWritable(config.cacheDir);
  } catch (err) {
    throw gatewayErrors.cacheDir(config.cacheDir, (err as NodeJS.ErrnoException).code ?? String(err));
  }
  // Leftovers of interrupted fills are removed once, before any worker can start a new one.
  await new DiskStore(config.cacheDir, config.diskCache, log).cleanTemp();
  const aggregator = new AggregatorRegistry();
  const claims = new Map<string, Claim>();
  const workers = new Map<number, Worker>();
  const send = (id: number, m: ToWorker) => {
    const w = workers.get(id);
    if (w?.isConnected()) w.send(m);
  };
  const others = (except: number, m: ToWorker) => {
    for (const id of workers.keys()) if (id !== except) send(id, m);
  };

  function onMessage(id: number, m: ToPrimary): void {
    switch (m.t) {
      case 'claim': {
        const c = claims.get(m.key);
        if (!c) {
          claims.set(m.key, { owner: id, followers: new Set(), written: 0 });
          send(id, { t: 'claimed', id: m.id, role: 'leader' });
        } else {
          c.followers.add(id);
          send(id, { t: 'claimed', id: m.id, role: 'join', streaming: c.streaming, written: c.written });
        }
        return;
      }
      case 'fill': {
        const c = claims.get(m.key);
        if (!c || c.owner !== id) return;
        if (m.ev.type === 'streaming') c.streaming = m.ev;
        if (m.ev.type === 'progress') c.written = m.ev.written;
        // Index updates go out before the terminal event, so a follower finds the entry stored.
        if (m.ev.type === 'done' && m.ev.stored) others(id, { t: 'put', meta: m.ev.meta, path: m.ev.path });
        if (m.ev.type === 'revalidated') others(id, { t: 'meta', meta: m.ev.meta });
        for (const f of c.followers) send(f, { t: 'fill', key: m.key, ev: m.ev });
        if (TERMINAL.has(m.ev.type)) claims.delete(m.key);
        return;
      }
      case 'invalidate':
        others(id, { t: 'invalidate', key: m.key });
        return;
      case 'evicted':
        others(id, { t: 'evicted', key: m.key, path: m.path });
        return;
      case 'metrics':
        aggregator
          .clusterMetrics()
          .then((text) => send(id, { t: 'metrics', id: m.id, text }))
          .catch((err) =>
            send(id, { t: 'metrics', id: m.id, text: `# aggregation failed: ${String(err)}\n` }),
          );
        return;
      default:
    }
  }

  /** A worker that died mid-fill fails that fill for its followers; they answer with an error. */
  function onExit(id: number): void {
    workers.delete(id);
    if (diskReporter === id) {
      diskReporter = [...workers.keys()][0];
      if (diskReporter !== undefined) send(diskReporter, { t: 'disk-metrics' });
    }
    for (const [key, c] of claims) {
      if (c.owner !== id) continue;
      const ev = {
        type: 'failed',
        proxyError: 'proxy_internal_error',
        status: 502,
        message: 'worker died during the fetch',
      } as const;
      for (const f of c.followers) send(f, { t: 'fill', key, ev });
      claims.delete(key);
    }
  }

  cluster.setupPrimary({
    exec: new URL('./worker-main.ts', import.meta.url).pathname,
    silent: false,
  });
  const env = {
    ESTUARY_GATEWAY_WORKER_CONFIG: JSON.stringify(config),
    ESTUARY_GATEWAY_WORKER_LOG: JSON.stringify({ level: logLevel, format: logFormat }),
  };
  const ports: Promise<number>[] = [];
  let stopping = false;
  let started = false;
  /** The one worker whose disk gauges count (every worker indexes the same files). */
  let diskReporter: number | undefined;
  /** Forks one worker; one that dies after start-up is replaced, so capacity comes back. */
  const fork = (): Promise<number> => {
    const reports = diskReporter === undefined;
    const w = cluster.fork({ ...env, ESTUARY_GATEWAY_WORKER_DISK_METRICS: reports ? '1' : '0' });
    if (reports) diskReporter = w.id;
    workers.set(w.id, w);
    // A message to a worker that is exiting fails with EPIPE; unheard, that error would end the
    // primary (and so every other worker) with status 1.
    w.on('error', (err) => log.debug({ worker: w.id, err: String(err) }, 'worker channel error'));
    return new Promise((resolve, reject) => {
      w.on('message', (m: unknown) => {
        if (!isToPrimary(m)) return;
        if (m.t === 'ready') resolve(m.port);
        else onMessage(w.id, m);
      });
      w.once('exit', (code, signal) => {
        onExit(w.id);
        reject(new Error(`worker exited with status ${code} before it was ready`));
        if (stopping) return;
        log.error({ worker: w.id, code, signal }, 'gateway worker exited; starting a new one');
        if (started) fork().catch((err) => log.error({ err: String(err) }, 'replacement worker failed'));
      });
    });
  };
  for (let i = 0; i < config.workers; i++) ports.push(fork());
  let port: number;
  try {
    port = (await Promise.all(ports))[0]!;
  } catch (err) {
    stopping = true;
    for (const w of workers.values()) w.kill('SIGKILL');
    throw err;
  }
  for (const p of ports) p.catch(() => undefined);
  started = true;
  return {
    port,
    async stop(deadline) {
      stopping = true;
      const exits = [...workers.values()].map(
        (w) =>
          new Promise<void>((resolve) => {
            if (w.isDead()) resolve();
            else w.once('exit', () => resolve());
          }),
      );
      for (const w of workers.values()) if (w.isConnected()) w.send({ t: 'stop' } satisfies ToWorker);
      const kill = () => {
        for (const w of workers.values()) if (!w.isDead()) w.process.kill('SIGKILL');
      };
      deadline?.addEventListener('abort', kill, { once: true });
      await Promise.all(exits);
      deadline?.removeEventListener('abort', kill);
    },
  };
}
