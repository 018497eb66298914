// The primary of the gateway: forks the workers (which share the listening socket), keeps the
// table of fills in flight (key -> the worker fetching it and those following it), relays fill
// events, replicates index changes, aggregates metrics, and stops everything on SIGINT/SIGTERM.
// It serves no requests itself, so a bug met while serving one cannot end it: it is the
// supervisor that restarts a dead worker at once, also when there is only one (as Squid's master
// restarts its kid), and gives up only on a crash loop (crash-loop.ts).

import cluster, { type Worker } from 'node:cluster';
import { Counter, Gauge, Registry } from 'prom-client';
import { EstuaryError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import { DiskStore, probeWritable } from '../cache/disk-store.ts';
import { gatewayErrors } from '../errors.ts';
import { expandCacheDir } from '../options.ts';
import type { GatewayConfig } from '../server.ts';
import { GATEWAY_PRIMARY_METRICS } from '../../lib/metric-names.ts';
import { recordWrites } from '../cache/write-marks.ts';
import { Confirmations } from './confirm.ts';
import { CRASH_LOOP, CrashLoop } from './crash-loop.ts';
import { Gatherer } from './gather.ts';
import { Listener } from './listener.ts';
import { invalidationParts, isToPrimary, type ToPrimary, type ToWorker } from './messages.ts';
import { OUTBOX_MAX_BYTES, Outbox } from './outbox.ts';

interface Claim {
  readonly key: string;
  /** `<owner>/<claim id>`: how the owner's fill events and its followers name this fill. */
  readonly name: string;
  readonly owner: number;
  readonly followers: Set<number>;
  streaming?: Extract<ToPrimary, { t: 'fill' }>['ev'];
  written: number;
}

export interface ClusterHandle {
  readonly port: number;
  /** Rejects when the workers crash in a loop and the primary gave up (ESTUARY_GW_CRASH_LOOP). */
  readonly failed: Promise<never>;
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
  const disk = new DiskStore(config.cacheDir, config.diskCache, log);
  await disk.cleanTemp();
  // Restarts are known here only: the workers' registries die with them.
  const own = new Registry();
  const restarts = new Counter({
    name: GATEWAY_PRIMARY_METRICS.workerRestarts,
    help: 'Gateway worker processes that died and were restarted',
    registers: [own],
  });
  const crashLoop = new CrashLoop();
  new Gauge({
    name: GATEWAY_PRIMARY_METRICS.workerRecentDeaths,
    help: `Gateway worker deaths in the last ${CRASH_LOOP.windowMs / 1000} s; at ${CRASH_LOOP.restarts} the gateway gives up`,
    registers: [own],
    collect() {
      this.set(crashLoop.recent(Date.now()));
    },
  });
  const overflows = new Counter({
    name: GATEWAY_PRIMARY_METRICS.workerBacklogOverflows,
    help: `Gateway workers restarted because they stopped reading what the primary sends them (over ${OUTBOX_MAX_BYTES / 1024 / 1024} MiB waiting)`,
    registers: [own],
  });
  // A stuck worker is ended; its exit starts the replacement like any death.
  const outbox = new Outbox((w, bytes) => {
    overflows.inc();
    log.error({ worker: w.id, pid: w.process.pid, bytes }, 'gateway worker stopped reading its channel; ending it (kill -9) to start a new one');
    w.process.kill('SIGKILL');
  });
  new Gauge({
    name: GATEWAY_PRIMARY_METRICS.workerBacklog,
    help: `Bytes the primary holds for the slowest worker to read; at ${OUTBOX_MAX_BYTES} that worker is restarted`,
    registers: [own],
    collect() {
      this.set(outbox.largest());
    },
  });
  const listener = new Listener();
  const listenAddr = `${config.listen.host}:${config.listen.port}`;
  const port = await listener.listen(config.listen.host, config.listen.port).catch((err: NodeJS.ErrnoException) => {
    throw gatewayErrors.listen(listenAddr, err.code ?? String(err));
  });
  let giveUp!: (err: EstuaryError) => void;
  const failed = new Promise<never>((_, reject) => {
    giveUp = reject;
  });
  failed.catch(() => undefined);
  /** The fill a new request for a key joins; a write on the key takes it out of here. */
  const claims = new Map<string, Claim>();
  /** Every fill in flight by name, joinable or not: its readers are still served. */
  const fills = new Map<string, Claim>();
  const workers = new Map<number, Worker>();
  /** Workers past start-up: only they have served anything to count. */
  const serving = new Map<number, Worker>();
  const send = (id: number, m: ToWorker) => {
    const w = workers.get(id);
    if (w) outbox.send(w, m);
  };
  const others = (except: number, m: ToWorker) => {
    for (const id of workers.keys()) if (id !== except) send(id, m);
  };
  const gatherer = new Gatherer(serving, own, (w, m) => outbox.send(w, m));
  const confirmations = new Confirmations({
    serving: () => serving.keys(),
    all: () => workers.keys(),
    relay: (id, seq, keys) => {
      const w = workers.get(id);
      if (w) outbox.sendParts(w, invalidationParts(seq, keys));
    },
    confirm: (w, id) => send(w, { t: 'invalidated', id }),
    progress: (w, id) => send(w, { t: 'invalidated', id, more: true }),
    mark: (keys, at) => recordWrites(disk.root, keys, at),
    kill: (w, keys) => {
      log.error({ worker: w, key: keys[0], keys: keys.length }, 'a gateway worker did not confirm an invalidation in time; restarting it');
      workers.get(w)?.process.kill('SIGKILL');
    },
  });

  function onMessage(id: number, m: ToPrimary): void {
    switch (m.t) {
      case 'claim': {
        const c = claims.get(m.key);
        if (!c) {
          const name = `${id}/${m.id}`;
          const fresh: Claim = { key: m.key, name, owner: id, followers: new Set(), written: 0 };
          claims.set(m.key, fresh);
          fills.set(name, fresh);
          send(id, { t: 'claimed', id: m.id, role: 'leader' });
        } else {
          c.followers.add(id);
          send(id, { t: 'claimed', id: m.id, role: 'join', fill: c.name, streaming: c.streaming, written: c.written });
        }
        return;
      }
      case 'fill': {
        const c = fills.get(`${id}/${m.id}`);
        if (!c) return;
        if (m.ev.type === 'streaming') c.streaming = m.ev;
        if (m.ev.type === 'progress') c.written = m.ev.written;
        // A fill a write overtook is not replicated: it may hold the replaced version.
        const current = claims.get(c.key) === c;
        // Index updates go out before the terminal event, so a follower finds the entry stored.
        if (current && m.ev.type === 'done' && m.ev.stored) others(id, { t: 'put', meta: m.ev.meta, path: m.ev.path });
        if (current && m.ev.type === 'revalidated') others(id, { t: 'meta', meta: m.ev.meta });
        for (const f of c.followers) send(f, { t: 'fill', fill: c.name, ev: m.ev });
        if (TERMINAL.has(m.ev.type)) {
          fills.delete(c.name);
          if (current) claims.delete(c.key);
        }
        return;
      }
      case 'invalidate':
        // Requests from now on start a new fill; the one in flight answers only its readers.
        for (const key of m.keys) claims.delete(key);
        confirmations.start(id, m.id, m.keys);
        return;
      case 'invalidated':
        if (m.more) confirmations.progressed(id, m.id);
        else confirmations.answered(id, m.id);
        return;
      case 'evicted':
        others(id, { t: 'evicted', key: m.key, path: m.path });
        return;
      case 'metrics':
        gatherer
          .gather()
          .then((view) => send(id, { t: 'metrics', id: m.id, view }))
          .catch((err) => log.error({ err: String(err) }, 'cannot gather the workers\' metrics'));
        return;
      case 'collected':
        gatherer.answered(id, m.id, m.report);
        return;
      default:
    }
  }

  /**
   * A worker that died mid-fill fails that fill for its followers. The failure is passable: a
   * follower that has sent its client nothing yet fetches the object itself (unstored), as after
   * a full disk; one that has sent bytes cuts its client.
   */
  function onExit(id: number): void {
    const w = workers.get(id);
    if (w) listener.gone(w);
    if (w) outbox.gone(w);
    workers.delete(id);
    serving.delete(id);
    gatherer.gone(id);
    if (diskReporter === id) {
      diskReporter = [...workers.keys()][0];
      if (diskReporter !== undefined) send(diskReporter, { t: 'disk-metrics' });
    }
    confirmations.gone(id);
    for (const c of fills.values()) {
      if (c.owner !== id) continue;
      const ev = {
        type: 'failed',
        proxyError: 'proxy_internal_error',
        status: 502,
        message: 'worker died during the fetch',
        passable: true,
      } as const;
      for (const f of c.followers) send(f, { t: 'fill', fill: c.name, ev });
      fills.delete(c.name);
      if (claims.get(c.key) === c) claims.delete(c.key);
    }
  }

  cluster.setupPrimary({
    exec: new URL('./worker-main.ts', import.meta.url).pathname,
    silent: false,
  });
  const env = {
    // Workers take connections from the listener above; they learn its port for their links.
    ESTUARY_GATEWAY_WORKER_CONFIG: JSON.stringify({ ...config, listen: { ...config.listen, port } }),
    ESTUARY_GATEWAY_WORKER_LOG: JSON.stringify({ level: logLevel, format: logFormat }),
  };
  const ports: Promise<number>[] = [];
  let stopping = false;
  let started = false;
  /** The one worker whose disk gauges count (every worker indexes the same files). */
  let diskReporter: number | undefined;
  /** Forks one worker; one that dies after start-up is replaced at once, so capacity comes back. */
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
        if (m.t === 'ready') {
          listener.ready(w);
          serving.set(w.id, w);
          resolve(m.port);
        } else if (m.t === 'start-failed') {
          reject(m.code ? new EstuaryError(m.code, m.message, { exitCode: m.exitCode }) : new Error(m.message));
        } else onMessage(w.id, m);
      });
      w.once('exit', (code, signal) => {
        onExit(w.id);
        reject(new Error(`a gateway worker exited with status ${code ?? signal} before it was ready`));
        if (stopping || !started) return;
        void replace(w.id, code, signal);
      });
    });
  };
  /** Replaces a dead worker at once, unless the deaths make a crash loop. */
  const replace = async (id: number, code: number | null, signal: string | null) => {
    if (crashLoop.died(Date.now())) {
      stopping = true;
      listener.close();
      log.fatal({ worker: id, code, signal }, 'gateway workers are crashing in a loop; giving up');
      for (const w of workers.values()) w.process.kill('SIGKILL');
      giveUp(gatewayErrors.crashLoop(CRASH_LOOP.restarts, CRASH_LOOP.windowMs / 1000));
      return;
    }
    restarts.inc();
    log.error({ worker: id, code, signal }, 'gateway worker exited; starting a new one');
    // With no other worker, nothing is filling: the dead one's partial files can go now.
    if (workers.size === 0) await disk.cleanTemp().catch(() => undefined);
    // The dead worker may have stored a version a write replaced: its replacement scans after the record.
    await confirmations.marksWritten();
    if (!stopping) fork().catch((err) => log.error({ err: String(err) }, 'replacement worker failed'));
  };
  for (let i = 0; i < config.workers; i++) ports.push(fork());
  try {
    await Promise.all(ports);
  } catch (err) {
    stopping = true;
    listener.close();
    for (const w of workers.values()) w.kill('SIGKILL');
    throw err;
  }
  for (const p of ports) p.catch(() => undefined);
  started = true;
  // Node's default for SIGHUP ends the process mid-transfer; here it means "reopen the logs".
  const onHup = () => {
    log.info({}, 'SIGHUP: workers reopen the access log');
    for (const w of workers.values()) if (w.isConnected()) w.send({ t: 'reopen-logs' } satisfies ToWorker);
  };
  process.on('SIGHUP', onHup);
  return {
    port,
    failed,
    async stop(deadline) {
      stopping = true;
      process.off('SIGHUP', onHup);
      listener.close();
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
