// Entry point of a gateway worker process (forked by gateway/cluster/primary.ts). It serves
// requests like a single gateway, with its fills coordinated through the primary. Signals are
// the primary's business: a worker stops when the primary says so, or when the primary is gone.

import cluster from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import { createLogger, flushLogs, type LogFormat, type LogLevel } from '../../lib/log.ts';
import type { Gateway, GatewayConfig } from '../server.ts';
import type { ToPrimary } from './messages.ts';

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

for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => undefined);

const send = (m: ToPrimary) => {
  if (process.connected) process.send?.(m);
};

// Answer the primary's metrics requests from the first moment (with nothing until started), or
// its aggregation would wait for a worker that is still starting.
new AggregatorRegistry();
AggregatorRegistry.setRegistries([]);

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
const link = { send, diskMetrics: process.env.ESTUARY_GATEWAY_WORKER_DISK_METRICS === '1' };
process.on('message', (m: unknown) => {
  const t = typeof m === 'object' && m !== null ? (m as { t?: unknown }).t : undefined;
  if (t === 'stop') void stop();
  if (t === 'disk-metrics') link.diskMetrics = true;
});
process.on('disconnect', () => void stop());

try {
  // The gateway's modules load only now, after the handlers above: a stop that the primary sends
  // while they load (to a replacement worker, say) is heard instead of dropped.
  const { startGateway } = await import('../server.ts');
  gateway = await startGateway(config, log, link);
  AggregatorRegistry.setRegistries([gateway.metrics.registry]);
  if (stopping) await gateway.stop();
  else send({ t: 'ready', port: gateway.port });
} catch (err) {
  log.error({ err: String(err) }, 'worker failed to start');
  flushLogs();
  process.exit(1);
}
