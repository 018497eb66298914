// Discovery assembled: consumer → ingest → registry ← HTTP, plus the sweeper and the verifier.
// startDiscovery() is what the command runs and what tests and the benchmark start in-process.

import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { firstRefusal, refusalMessage } from '../lib/amqp-refusal.ts';
import type { HmacKey } from '../lib/heartbeat-auth.ts';
import type { Logger } from '../lib/log.ts';
import type { Service } from '../lib/lifecycle.ts';
import { FloodGuard } from './admission.ts';
import { type Consumer, startConsumer } from './consumer.ts';
import { discoveryErrors } from './errors.ts';
import { type GeoDb, NO_GEO_DB } from './geoip.ts';
import { buildHttp } from './http.ts';
import { Departures } from './departures.ts';
import { Rejections } from './rejections.ts';
import { createIngest, startSweeper } from './ingest.ts';
import { createLocator } from './locator.ts';
import { createMetrics, type DiscoveryMetrics } from './metrics.ts';
import { Registry } from './registry.ts';
import { EMPTY_SITE_MAP, type SiteMap } from './site-map.ts';
import { Verifier } from './verifier.ts';

export interface DiscoveryOptions {
  readonly listen: { host: string; port: number };
  readonly amqpUrl: string;
  readonly exchange: string;
  readonly keys: readonly HmacKey[];
  readonly shoalCompat: boolean;
  /** Keep loopback and link-local cache addresses (single-host test setups only). */
  readonly allowHostAddresses?: boolean;
  readonly siteMap?: SiteMap;
  readonly geoDb?: GeoDb;
  readonly expiryMs: number;
  readonly sweepMs: number;
  readonly verify: boolean;
  readonly testUrl: string;
  readonly verifyTimeoutMs: number;
  readonly recheckMs: number;
  readonly retryBaseMs: number;
  readonly maxCaches: number;
  readonly floodBurst: number;
  readonly floodPerSecond: number;
  readonly trustProxy: boolean;
  readonly reconnectMaxMs?: number;
  readonly log: Logger;
}

export interface Discovery extends Service {
  readonly url: string;
  readonly registry: Registry;
  readonly metrics: DiscoveryMetrics;
  readonly consumer: Consumer;
  readonly http: FastifyInstance;
}

const VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
/** Refused heartbeats stay on the page for an hour: long enough for the next look at it. */
const REJECTIONS_SHOWN_MS = 3_600_000;

export async function startDiscovery(o: DiscoveryOptions): Promise<Discovery> {
  const { log } = o;
  const registry = new Registry(o.maxCaches);
  const locator = createLocator(o.siteMap ?? EMPTY_SITE_MAP, o.geoDb ?? NO_GEO_DB);
  const metrics = createMetrics(registry, () => broker());
  const flood = new FloodGuard(o.floodBurst, o.floodPerSecond);
  const verifier = new Verifier(registry, {
    testUrl: o.testUrl,
    timeoutMs: o.verifyTimeoutMs,
    recheckMs: o.recheckMs,
    retryBaseMs: o.retryBaseMs,
    concurrency: 16,
    log,
  });
  const rejections = new Rejections();
  const departures = new Departures();
  const ingest = createIngest({
    rejections,
    departures,
    registry,
    locator,
    policy: {
      keys: new Map(o.keys.map((k) => [k.id, k])),
      allowUnsigned: o.shoalCompat,
      allowHostAddresses: o.allowHostAddresses,
    },
    verify: o.verify,
    log,
    flood,
    count: (result) => metrics.heartbeats.inc({ result }),
    onFresh: (e) => verifier.consider(e),
  });
  // The consumer starts once the port is ours: a server that cannot answer must not take
  // heartbeats (and must not leave an AMQP connection that keeps the process alive).
  const link: { consumer?: Consumer } = {};
  const broker = () => link.consumer?.state() ?? 'disconnected';
  const http = buildHttp({
    registry,
    locator,
    metrics,
    log,
    trustProxy: o.trustProxy,
    health: () => ({ amqp: broker(), caches: registry.size }),
    pageFacts: () => ({
      version: VERSION,
      exchange: o.exchange,
      broker: broker(),
      brokerRefusal: link.consumer?.refusal(),
      verify: o.verify,
      shoalCompat: o.shoalCompat,
      testUrl: o.testUrl,
      expiryMs: o.expiryMs,
      rejections: rejections.recent(Date.now(), REJECTIONS_SHOWN_MS),
      departed: departures.recent(Date.now()),
      keyed: o.keys.length > 0,
      amqpUrl: o.amqpUrl,
    }),
  });
  let url: string;
  try {
    url = await http.listen({ host: o.listen.host, port: o.listen.port });
  } catch (err) {
    throw discoveryErrors.listen(
      `${o.listen.host}:${o.listen.port}`,
      (err as NodeJS.ErrnoException).code ?? String(err),
    );
  }
  const started = startConsumer({
    url: o.amqpUrl,
    exchange: o.exchange,
    log,
    onMessage: ingest,
    reconnectMaxMs: o.reconnectMaxMs,
  });
  link.consumer = started;
  const stopSweeper = startSweeper(registry, flood, o.expiryMs, o.sweepMs, log);
  if (o.verify) verifier.start();
  const stop = async () => {
    stopSweeper();
    verifier.stop();
    await http.close();
    await started.stop();
  };
  // A refused login does not heal by retrying: at start-up it ends discovery (exit 2).
  const refused = await firstRefusal(started.firstAnswer);
  if (refused) {
    await stop();
    throw discoveryErrors.amqpAuth(refusalMessage(refused, o.amqpUrl));
  }
  log.info(
    { url, exchange: o.exchange, shoalCompat: o.shoalCompat, keys: o.keys.map((k) => k.id) },
    'discovery listening',
  );
  return {
    url,
    registry,
    metrics,
    consumer: started,
    http,
    stop,
  };
}
