// Entry point of a gateway worker process (forked by gateway/cluster/primary.ts). It serves
// requests like a single gateway, with its fills coordinated through the primary. Signals are
// the primary's business: a worker stops when the primary says so, and exits at once when the
// primary is gone (nothing would coordinate its fills, and a new gateway may take the cache).
// An uncaught exception is logged once, with the request being served, and ends the worker: its
// state may be corrupt, and the primary starts a fresh one.

import cluster from 'node:cluster';
import { isEstuaryError } from '../../lib/errors.ts';
import { createLogger, flushLogs, type LogFormat, type LogLevel } from '../../lib/log.ts';
import { servedRequest } from '../request-context.ts';
import type { Gateway, GatewayConfig, WorkerLink } from '../server.ts';
import type { ProcessReport, ToPrimary } from './messages.ts';

const config = JSON.parse(process.env.ESTUARY_GATEWAY_WORKER_CONFIG ?? '{}') as GatewayConfig;
const logOpts = JSON.parse(process.env.ESTUARY_GATEWAY_WORKER_LOG ?? '{}') as {
  level: LogLevel;
  format: LogFormat;
};
const log = createLogger({
  level: logOpts.level ?? 'info',
  format: logOpts.format ?? 'json',
  role: 'gateway',
}).child({
  worker: cluster.worker?.id,
});

/** Exit status of a worker that crashed (EX_SOFTWARE), told apart from a failed start (1). */
const CRASHED = 70;

process.on('uncaughtException', (err) => {
  log.fatal({ err, request: servedRequest() ?? null }, 'gateway worker crashed; the primary starts a new one');
  flushLogs();
  process.exit(CRASHED);
});

for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => undefined);

const send = (m: ToPrimary) => {
  if (process.connected) process.send?.(m);
};

/** Until the gateway has started, this worker has counted nothing. */
const NOTHING_YET: ProcessReport = { metrics: [], errors: [], down: [], diskFull: false };

let gateway: Gateway | undefined;
let stopping = false;
/** Stops on the primary's word, also while still starting (a replacement worker may get it early). */
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await gateway?.stop().catch((err) => log.error({ err }, 'error while stopping'));
  flushLogs();
  process.exit(0);
}
const link: WorkerLink = {
  send,
  diskMetrics: process.env.ESTUARY_GATEWAY_WORKER_DISK_METRICS === '1',
  replacement: process.env.ESTUARY_GATEWAY_WORKER_REPLACEMENT === '1',
  early: [],
};
process.on('message', (m: unknown) => {
  const t = typeof m === 'object' && m !== null ? (m as { t?: unknown }).t : undefined;
  // Until the gateway listens itself, removals wait here (a missed stored entry only costs a miss).
  if (t === 'invalidate' || t === 'evicted') link.early?.push(m);
  if (t === 'stop') void stop();
  if (t === 'disk-metrics') link.diskMetrics = true;
  // The primary asks workers past start-up only; one asked during a stop still answers.
  if (t === 'collect') {
    const id = (m as { id: number }).id;
    (gateway?.report() ?? Promise.resolve(NOTHING_YET))
      .then((report) => send({ t: 'collected', id, report }))
      .catch((err: unknown) => log.error({ err: String(err) }, 'cannot report this worker\'s metrics'));
  }
});
process.on('disconnect', () => {
  if (stopping) return;
  log.error('the gateway primary is gone; this worker exits');
  flushLogs();
  process.exit(1);
});

try {
  // The gateway's modules load only now, after the handlers above: a stop that the primary sends
  // while they load (to a replacement worker, say) is heard instead of dropped.
  const { startGateway } = await import('../server.ts');
  gateway = await startGateway(config, log, link);
  if (stopping) await gateway.stop();
  else send({ t: 'ready', port: gateway.port });
} catch (err) {
  // The primary ends with this very error (a port in use is the user's to fix: exit 2).
  const known = isEstuaryError(err);
  log.debug({ err: String(err) }, 'worker failed to start');
  if (!process.connected) process.exit(1);
  process.send?.(
    {
      t: 'start-failed',
      code: known ? err.code : undefined,
      message: known ? err.message : String(err),
      exitCode: known ? err.exitCode : 1,
    } satisfies ToPrimary,
    () => {
      flushLogs();
      process.exit(1);
    },
  );
}
