// `estuary agent`: runs beside a cache and heartbeats its location and load to discovery.

import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { networkInterfaces } from 'node:os';
import { defineCommand } from '../lib/command.ts';
import { option, optional } from '../lib/config/options.ts';
import { duration, float, oneOf, str, url } from '../lib/config/values.ts';
import { parseHmacKey, SHARED_KEY_ID } from '../lib/heartbeat-auth.ts';
import { CACHE_KINDS, SHOAL_EXCHANGE, UPSTREAMS } from '../lib/heartbeat.ts';
import { runUntilSignalled } from '../lib/lifecycle.ts';
import { expandSecret } from '../lib/secret-value.ts';
import { pickAddresses } from './addresses.ts';
import { startAgent } from './agent.ts';
import { agentErrors } from './errors.ts';

/** Shoal's default max_load: 1 Gbit/s in KB/s (125,000,000 B/s / 1024). */
const DEFAULT_MAX_LOAD = 122_070;

export const agentOptions = {
  amqp: option(url(['amqp:', 'amqps:']), 'amqp://localhost:5672', 'AMQP broker discovery listens on'),
  exchange: option(str('NAME'), SHOAL_EXCHANGE, 'topic exchange to publish heartbeats on'),
  cacheUrl: optional(
    url(),
    'the cache this agent runs beside, e.g. http://127.0.0.1:3128 (its port is advertised)',
  ),
  interval: option(duration(1000), 30_000, 'time between heartbeats'),
  testUrl: optional(
    url(),
    'file fetched through the cache before each heartbeat; the cache is advertised only while it passes',
  ),
  selfTestTimeout: option(duration(100), 2000, 'time the self-test fetch may take'),
  site: optional(str('NAME'), 'site name advertised (must match a per-site HMAC key id)'),
  lat: optional(float(-90, 90, 'DEG'), 'latitude; without it discovery locates the cache from its address'),
  lon: optional(float(-180, 180, 'DEG'), 'longitude'),
  hmacKey: optional(str('KEY'), 'key to sign heartbeats: SECRET (shared) or SITE=SECRET, or @FILE', {
    secret: true,
  }),
  hostname: optional(str('NAME'), 'host name advertised (default: this host name)'),
  publicIp: optional(
    str('ADDR'),
    'public address advertised (default: the first public IPv4 address of this host)',
  ),
  externalIpUrl: optional(
    url(),
    'when the host has no public address: URL that tells it the address the world sees (discovery’s /external_ip)',
  ),
  privateIp: optional(
    str('ADDR'),
    'private address advertised (default: the first private IPv4 address of this host)',
  ),
  cacheKind: option(
    oneOf(['auto', ...CACHE_KINDS] as const),
    'auto',
    'auto: an estuary gateway if it serves /estuary/v1/summary, else squid',
  ),
  upstream: option(oneOf(UPSTREAMS), 'both', 'what the cache fetches: cvmfs, frontier or both'),
  maxLoad: option(
    float(1, 1e9, 'KBPS'),
    DEFAULT_MAX_LOAD,
    'KB/s the cache can send at most (Shoal: 1 Gbit/s)',
  ),
  interface: optional(
    str('IFACE'),
    'network interface whose sent bytes are the load of a Squid/Varnish (default: the default route)',
  ),
  uuid: optional(
    str('ID'),
    'identity of this cache (default: derived from host name and --cache-url, stable across restarts)',
  ),
};

/** A stable id, so a restarted agent replaces its old registry entry instead of adding another. */
function stableUuid(host: string, cacheUrl: string): string {
  const h = createHash('sha256').update(`${host}\n${cacheUrl}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

export const command = defineCommand({
  name: 'agent',
  summary: 'heartbeat a cache’s location and load to discovery over AMQP (Shoal-compatible)',
  description: `
Runs beside a cache (an estuary gateway, or Squid/Varnish) and publishes a heartbeat on start and
every --interval to the AMQP exchange (topic, routing key "info"): Shoal's fields plus estuary's
under "estuary_v1". Load comes from the gateway's /metrics, or from the interface's sent bytes.
The cache is advertised only while the self-test fetch of --test-url through it passes. On
SIGTERM the agent sends a goodbye so discovery drops the cache at once. See docs/DISCOVERY.md.`,
  examples: [
    {
      cmd: 'estuary agent --amqp amqp://mq.example.org --cache-url http://127.0.0.1:3128 --hmac-key @/etc/estuary/hmac.key --site KEK',
      what: 'advertise the local cache, signed with the site key',
    },
    {
      cmd: 'estuary agent --amqp amqp://mq.example.org --cache-url http://127.0.0.1:3128 --test-url http://cvmfs-stratum-one.cern.ch/cvmfs/atlas.cern.ch/.cvmfswhitelist --lat 36.15 --lon 140.08',
      what: 'advertise only while the whitelist fetch through the cache passes; give the position by hand',
    },
  ],
  options: agentOptions,
  async run({ config, log }) {
    if (!config.cacheUrl) throw agentErrors.noCacheUrl();
    if ((config.lat === undefined) !== (config.lon === undefined)) throw agentErrors.halfLocation();
    let key: ReturnType<typeof parseHmacKey> | undefined;
    if (config.hmacKey) {
      const [text] = expandSecret(config.hmacKey, agentErrors.keyFileUnreadable);
      try {
        key = parseHmacKey(text ?? '');
      } catch (err) {
        throw agentErrors.badHmacKey((err as Error).message);
      }
      if (key.id !== SHARED_KEY_ID && key.id !== config.site)
        throw agentErrors.keySiteMismatch(key.id, config.site);
    } else {
      log.warn(
        'no --hmac-key: heartbeats are unsigned and only discovery servers with --shoal-compat accept them',
      );
    }
    const detected = pickAddresses(networkInterfaces());
    const host = config.hostname ?? hostname();
    const agent = await startAgent({
      amqpUrl: config.amqp,
      exchange: config.exchange,
      cacheUrl: config.cacheUrl,
      intervalMs: config.interval,
      testUrl: config.testUrl,
      selfTestTimeoutMs: config.selfTestTimeout,
      site: config.site,
      lat: config.lat,
      lon: config.lon,
      key,
      uuid: config.uuid ?? stableUuid(host, config.cacheUrl),
      hostname: host,
      publicIp: config.publicIp ?? detected.publicIp,
      privateIp: config.privateIp ?? detected.privateIp,
      externalIpUrl: config.externalIpUrl,
      kind: config.cacheKind,
      upstream: config.upstream,
      maxLoad: config.maxLoad,
      iface: config.interface,
      log,
    });
    return runUntilSignalled(agent, { log, shutdownTimeoutMs: config.shutdownTimeout });
  },
});
