// The agent's loop. On start and every interval: test the cache with a real fetch through it,
// read its load (and, beside an estuary gateway, what it holds), and publish a heartbeat. While
// the self-test fails nothing is advertised, and the first failure after a success sends a
// goodbye, so discovery stops sending clients to a broken cache at once rather than after expiry.
// On stop it says goodbye as well.

import { isIP } from 'node:net';
import { hostname as osHostname } from 'node:os';
import { type HmacKey, sign } from '../lib/heartbeat-auth.ts';
import {
  type CacheKind,
  GOODBYE_ROUTING_KEY,
  HEARTBEAT_ROUTING_KEY,
  type Upstream,
} from '../lib/heartbeat.ts';
import { firstRefusal, refusalMessage } from '../lib/amqp-refusal.ts';
import type { Service } from '../lib/lifecycle.ts';
import type { Logger } from '../lib/log.ts';
import { proxyFetch } from '../lib/proxy-fetch.ts';
import { sleep } from '../lib/backoff.ts';
import { type CounterSample, rateKBps } from './load.ts';
import { buildHeartbeat, holdingsFrom, type Identity, type Observation } from './message.ts';
import {
  detectKind,
  gatewayLoadSource,
  interfaceLoadSource,
  type LoadSource,
  portAnswers,
  readGatewaySummary,
} from './probe.ts';
import { agentErrors } from './errors.ts';
import { type Publisher, startPublisher } from './publisher.ts';

export interface AgentOptions {
  readonly amqpUrl: string;
  readonly exchange: string;
  readonly cacheUrl: string;
  readonly intervalMs: number;
  readonly testUrl?: string;
  readonly selfTestTimeoutMs: number;
  readonly site?: string;
  readonly lat?: number;
  readonly lon?: number;
  readonly key?: HmacKey;
  readonly uuid: string;
  readonly hostname?: string;
  readonly publicIp?: string;
  readonly privateIp?: string;
  /** Without a public address: a URL answering {"external_ip": ...} (Shoal's, or estuary discovery's /external_ip). */
  readonly externalIpUrl?: string;
  readonly kind: CacheKind | 'auto';
  readonly upstream: Upstream;
  readonly maxLoad: number;
  readonly iface?: string;
  readonly procRoot?: string;
  readonly reconnectMaxMs?: number;
  readonly log: Logger;
}

export interface Agent extends Service {
  /** Runs one heartbeat round now; resolves with what happened. */
  tick(): Promise<'published' | 'not-connected' | 'self-test-failed'>;
  readonly identity: Identity;
  readonly publisher: Publisher;
}

/** Shoal measures load over one second at start; the first heartbeat waits that long for a rate. */
const FIRST_SAMPLE_MS = 1000;

export async function startAgent(o: AgentOptions): Promise<Agent> {
  const { log } = o;
  const cache = new URL(o.cacheUrl);
  const port = Number(cache.port || 80);
  const kind = await detectKind(o.cacheUrl, o.kind);
  const identity: Identity = {
    uuid: o.uuid,
    hostname: o.hostname ?? osHostname(),
    port,
    kind,
    upstream: o.upstream,
    maxLoad: o.maxLoad,
    publicIp: o.publicIp,
    privateIp: o.privateIp,
    site: o.site,
    lat: o.lat,
    lon: o.lon,
    intervalS: Math.max(1, Math.round(o.intervalMs / 1000)),
  };
  const source: LoadSource =
    kind === 'estuary' ? gatewayLoadSource(o.cacheUrl) : await interfaceLoadSource(o.iface, o.procRoot);
  log.info({ kind, load: source.describe, identity }, 'agent starting');
  let last: CounterSample | undefined = await source.sample().catch(() => undefined);
  let load = 0;
  let advertised = false;
  let running: Promise<Awaited<ReturnType<Agent['tick']>>> | undefined;

  const selfTest = async (): Promise<{ ok: boolean; ms: number; error?: string }> => {
    if (o.testUrl) {
      const r = await proxyFetch(o.cacheUrl, o.testUrl, {
        timeoutMs: o.selfTestTimeoutMs,
        maxBytes: 256 * 1024,
      });
      return {
        ok: r.ok && r.body.length > 0,
        ms: r.ms,
        error: r.error || (r.body.length ? undefined : 'empty body'),
      };
    }
    const t = performance.now();
    const ok = await portAnswers(cache.hostname.replace(/^\[|\]$/g, ''), port, o.selfTestTimeoutMs);
    return {
      ok,
      ms: performance.now() - t,
      error: ok ? undefined : 'cache port does not accept connections',
    };
  };

  const send = async (routingKey: string, goodbye: boolean, obs: Observation): Promise<boolean> => {
    const body = Buffer.from(JSON.stringify(buildHeartbeat(identity, obs, goodbye)));
    return publisher.publish(routingKey, body, o.key ? sign(body, o.key) : {});
  };

  const learnExternalIp = async () => {
    if (identity.publicIp || identity.externalIp || !o.externalIpUrl) return;
    try {
      const res = await fetch(o.externalIpUrl, { signal: AbortSignal.timeout(o.selfTestTimeoutMs) });
      const ip = ((await res.json()) as { external_ip?: unknown }).external_ip;
      if (typeof ip === 'string' && isIP(ip) !== 0) {
        identity.externalIp = ip;
        log.info({ externalIp: ip }, 'learned the external address');
      }
    } catch (err) {
      log.warn(
        { err: (err as Error).message, url: o.externalIpUrl },
        'cannot learn the external address; retrying next round',
      );
    }
  };

  let leftOut = 0;
  const round = async (): Promise<'published' | 'not-connected' | 'self-test-failed'> => {
    await learnExternalIp();
    if (last && Date.now() - last.atMs < FIRST_SAMPLE_MS)
      await sleep(FIRST_SAMPLE_MS - (Date.now() - last.atMs));
    const test = await selfTest();
    try {
      const cur = await source.sample();
      if (last) load = rateKBps(last, cur);
      last = cur;
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'cannot read the cache load; sending the last value');
    }
    const summary = kind === 'estuary' ? await readGatewaySummary(o.cacheUrl) : undefined;
    const held = summary && holdingsFrom(summary);
    if (held && held.left > 0 && held.left !== leftOut)
      log.warn({ left: held.left }, 'holdings with over-long names left out of the heartbeat');
    leftOut = held?.left ?? 0;
    const obs: Observation = {
      nowMs: Date.now(),
      load,
      selfTest: { ok: test.ok, ms: test.ms },
      holds: held?.holds,
    };
    if (!test.ok) {
      log.warn(
        { error: test.error, testUrl: o.testUrl },
        'self-test through the cache failed; not advertising',
      );
      if (advertised && (await send(GOODBYE_ROUTING_KEY, true, obs))) advertised = false;
      return 'self-test-failed';
    }
    if (!(await send(HEARTBEAT_ROUTING_KEY, false, obs))) return 'not-connected';
    if (!advertised) log.info({ load, ms: Math.round(test.ms) }, 'advertising the cache');
    advertised = true;
    return 'published';
  };

  const tick = () => {
    running ??= round().finally(() => {
      running = undefined;
    });
    return running;
  };

  const publisher = startPublisher({
    url: o.amqpUrl,
    exchange: o.exchange,
    log,
    reconnectMaxMs: o.reconnectMaxMs,
    onConnected: () => void tick().catch((err) => log.error({ err }, 'heartbeat failed')),
  });
  // A refused login does not heal by retrying: at start-up it ends the agent (exit 2).
  const refused = await firstRefusal(publisher.firstAnswer);
  if (refused) {
    await publisher.close();
    throw agentErrors.amqpAuth(refusalMessage(refused, o.amqpUrl));
  }
  const timer = setInterval(
    () => void tick().catch((err) => log.error({ err }, 'heartbeat failed')),
    o.intervalMs,
  );

  return {
    identity,
    publisher,
    tick,
    async stop(deadline) {
      clearInterval(timer);
      await running?.catch(() => {});
      if (advertised && !deadline.aborted) {
        const ok = await send(GOODBYE_ROUTING_KEY, true, { nowMs: Date.now(), load });
        log.info({ delivered: ok }, 'goodbye sent');
      }
      await publisher.close();
    },
  };
}
