// `estuary discovery`: consumes cache heartbeats and answers nearest-cache questions, Shoal-compatible.

import { readFileSync } from 'node:fs';
import { defineCommand } from '../lib/command.ts';
import { option, optional } from '../lib/config/options.ts';
import { bool, duration, float, hostPort, int, list, str, url } from '../lib/config/values.ts';
import { isEstuaryError } from '../lib/errors.ts';
import { type HmacKey, parseHmacKey } from '../lib/heartbeat-auth.ts';
import { SHOAL_EXCHANGE } from '../lib/heartbeat.ts';
import { runUntilSignalled } from '../lib/lifecycle.ts';
import { expandSecret } from '../lib/secret-value.ts';
import { discoveryErrors } from './errors.ts';
import { bundledGeoDbPaths, type GeoDb, NO_GEO_DB, openGeoDb } from './geoip.ts';
import { startDiscovery } from './service.ts';
import { parseSiteMap, type SiteMap } from './site-map.ts';
import { DEFAULT_TEST_URL } from './verifier.ts';

export const discoveryOptions = {
  listen: option(
    hostPort(),
    { host: '0.0.0.0', port: 8080 },
    'address for the REST API, /wpad.dat and the web page',
  ),
  amqp: option(url(['amqp:', 'amqps:']), 'amqp://localhost:5672', 'AMQP broker the agents publish to'),
  exchange: option(str('NAME'), SHOAL_EXCHANGE, 'topic exchange heartbeats arrive on'),
  hmacKey: option(
    list(str('KEY')),
    [] as string[],
    'heartbeat keys: SECRET (shared) or SITE=SECRET (per site), or @FILE with one per line',
    {
      secret: true,
    },
  ),
  shoalCompat: option(
    bool(),
    false,
    'also accept unsigned heartbeats (real Shoal agents); their caches are marked unsigned',
  ),
  siteMap: optional(
    str('FILE'),
    'YAML file mapping CIDRs to sites and coordinates; wins over the IP database',
  ),
  geoDb: option(
    list(str('FILE')),
    [] as string[],
    'MaxMind-format city databases; empty: the bundled GeoLite2 City, "none": no database',
  ),
  expiry: option(duration(1000), 180_000, 'drop a cache this long after its last heartbeat'),
  sweepInterval: option(duration(100), 15_000, 'how often expired caches are dropped'),
  verify: option(bool(), true, 'fetch --test-url through each cache before advertising it'),
  testUrl: option(url(), DEFAULT_TEST_URL, 'small file fetched through each cache to verify it'),
  verifyTimeout: option(duration(100), 2000, 'time a verification fetch may take'),
  recheck: option(
    duration(1000),
    600_000,
    'how often a verified cache is verified again (and the longest retry delay)',
  ),
  retryBase: option(
    duration(100),
    30_000,
    'first retry delay for a cache that failed verification; doubles per failure',
  ),
  maxCaches: option(
    int(1, 10_000_000),
    100_000,
    'registry size limit; heartbeats from further new caches are dropped',
  ),
  floodBurst: option(int(1, 1000), 10, 'heartbeats one cache may send in a burst'),
  floodRate: option(float(0.001, 1000), 1, 'sustained heartbeats per second one cache may send'),
  trustProxy: option(
    bool(),
    false,
    'take the client address from X-Forwarded-For (only behind your own reverse proxy)',
  ),
  allowHostAddresses: option(
    bool(),
    false,
    'keep caches\' loopback and link-local addresses (a single-host test setup; never in production)',
  ),
};

export function loadKeys(values: readonly string[]): HmacKey[] {
  const keys: HmacKey[] = [];
  for (const v of values.flatMap((x) => expandSecret(x, discoveryErrors.keyFileUnreadable))) {
    try {
      keys.push(parseHmacKey(v));
    } catch (err) {
      throw discoveryErrors.badHmacKey((err as Error).message);
    }
  }
  return keys;
}

function loadSiteMap(path: string | undefined): SiteMap | undefined {
  if (!path) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw discoveryErrors.siteMap(path, (err as NodeJS.ErrnoException).code ?? String(err));
  }
  try {
    return parseSiteMap(text);
  } catch (err) {
    throw discoveryErrors.siteMap(path, (err as Error).message);
  }
}

async function loadGeoDb(paths: readonly string[]): Promise<GeoDb> {
  if (paths.length === 1 && paths[0] === 'none') return NO_GEO_DB;
  const files = paths.length > 0 ? paths : bundledGeoDbPaths();
  try {
    return await openGeoDb(files);
  } catch (err) {
    if (isEstuaryError(err)) throw err;
    throw discoveryErrors.geoDb(files.join(', '), (err as Error).message.split('\n')[0]!);
  }
}

export const command = defineCommand({
  name: 'discovery',
  summary: 'consume cache heartbeats and tell worker nodes their nearest cache (Shoal-compatible)',
  description: `
Consumes heartbeats from estuary agents (and, with --shoal-compat, from real Shoal agents) on an
AMQP topic exchange, keeps a registry in memory, verifies each cache by fetching --test-url through
it, and answers Shoal's REST endpoints (/nearest[/N], /nearestverified, /nearestcvmfs,
/nearestconditions, /all, /wpad.dat) plus estuary's own /api/v1/caches. The web page at / lists
every cache. Several servers may run side by side; each gets every heartbeat. See docs/DISCOVERY.md.`,
  examples: [
    {
      cmd: 'estuary discovery --listen 0.0.0.0:8080 --amqp amqp://mq.example.org --hmac-key @/etc/estuary/hmac.keys',
      what: 'accept only heartbeats signed with one of the keys in the file',
    },
    {
      cmd: 'estuary discovery --amqp amqp://mq.example.org --hmac-key @/etc/estuary/hmac.keys --shoal-compat --site-map sites.yaml',
      what: 'also accept unsigned Shoal agents during a migration; place networks with a site map',
    },
  ],
  options: discoveryOptions,
  async run({ config, log }) {
    const keys = loadKeys(config.hmacKey);
    if (keys.length === 0 && !config.shoalCompat) {
      // Logged with its code as well, like discovery's other start-up failures, so a service
      // manager's journal holds the code and not just the CLI's sentence.
      const err = discoveryErrors.noKeys();
      log.error({ code: err.code }, 'refusing to start: no --hmac-key and no --shoal-compat');
      throw err;
    }
    const siteMap = loadSiteMap(config.siteMap);
    const geoDb = await loadGeoDb(config.geoDb);
    const service = await startDiscovery({
      listen: config.listen,
      amqpUrl: config.amqp,
      exchange: config.exchange,
      keys,
      shoalCompat: config.shoalCompat,
      siteMap,
      geoDb,
      expiryMs: config.expiry,
      sweepMs: config.sweepInterval,
      verify: config.verify,
      testUrl: config.testUrl,
      verifyTimeoutMs: config.verifyTimeout,
      recheckMs: config.recheck,
      retryBaseMs: config.retryBase,
      maxCaches: config.maxCaches,
      floodBurst: config.floodBurst,
      floodPerSecond: config.floodRate,
      trustProxy: config.trustProxy,
      allowHostAddresses: config.allowHostAddresses,
      log,
    });
    return runUntilSignalled(service, { log, shutdownTimeoutMs: config.shutdownTimeout });
  },
});
