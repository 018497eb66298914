// The REST face of discovery: Shoal's endpoints unchanged (so existing Shoal clients and WPAD
// users need nothing new), estuary's versioned API, the web page and /metrics. Thin: every answer
// is computed by query.ts and formatted by shoal-format.ts / api-v1.ts / page.ts.

import { isIP } from 'node:net';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from '../lib/log.ts';
import { apiCache, apiNearest, apiSchemas, API_VERSION } from './api-v1.ts';
import { normaliseAddress } from './cidr.ts';
import { discoveryErrors } from './errors.ts';
import type { Locator } from './locator.ts';
import type { DiscoveryMetrics } from './metrics.ts';
import { type PageFacts, renderCachePage, renderPage } from './page.ts';
import { ask, DEFAULT_N, MAX_N, type Question, type Want } from './query.ts';
import type { Registry } from './registry.ts';
import {
  PAC_CONTENT_TYPE,
  SHOAL_WPAD_COUNT,
  shoalAll,
  shoalNearest,
  shoalPac,
} from './shoal-format.ts';

export interface HttpDeps {
  readonly registry: Registry;
  readonly locator: Locator;
  readonly metrics: DiscoveryMetrics;
  readonly log: Logger;
  readonly trustProxy: boolean;
  readonly health: () => Record<string, unknown>;
  /** What the page says about discovery itself, and the heartbeats it refused lately. */
  readonly pageFacts: () => PageFacts;
}

type Req = FastifyRequest<{
  Params: { n?: string; id?: string };
  Querystring: Record<string, string | undefined>;
}>;

function parseN(raw: string | undefined, fallback = DEFAULT_N): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d{1,3}$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_N) {
    throw discoveryErrors.badQuery(`N must be a whole number from 1 to ${MAX_N}, not "${raw}"`);
  }
  return Number(raw);
}

/**
 * N on Shoal's paths, as Shoal's routes take it: any run of digits. Clients ask for their cache
 * count plus five, and a Shoal server answers with as many caches as it has, so a large N is
 * capped at the registry's size rather than refused; 0 gives Shoal's null.
 */
function parseShoalN(raw: string | undefined, size: number): number {
  if (raw === undefined || raw === '') return Math.min(DEFAULT_N, size);
  if (!/^\d+$/.test(raw)) throw discoveryErrors.badQuery(`N must be a whole number, not "${raw}"`);
  return Math.min(Number(raw), size);
}

function parseCoord(raw: string | undefined, name: string, limit: number): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const v = Number(raw);
  if (!Number.isFinite(v) || Math.abs(v) > limit)
    throw discoveryErrors.badQuery(`${name} must be a number from -${limit} to ${limit}`);
  return v;
}

/** The client position and address a request asks about: ?lat=&lon=, ?near=, ?ip=, else the peer. */
function clientOf(req: Req): Pick<Question, 'clientIp' | 'explicit'> {
  const q = req.query;
  let lat = parseCoord(q.lat, 'lat', 90);
  let lon = parseCoord(q.lon, 'lon', 180);
  let ip = q.ip;
  if (q.near) {
    const m = /^(-?[\d.]+),(-?[\d.]+)$/.exec(q.near);
    if (m) {
      lat = parseCoord(m[1], 'near latitude', 90);
      lon = parseCoord(m[2], 'near longitude', 180);
    } else ip = q.near;
  }
  if ((lat === undefined) !== (lon === undefined)) throw discoveryErrors.badQuery('give both lat and lon');
  if (ip !== undefined && isIP(normaliseAddress(ip)) === 0) {
    const hint = q.near === ip ? ': near takes an IP address or LAT,LON such as 36.1,140.1' : '';
    throw discoveryErrors.badQuery(`"${ip}" is not an IP address${hint}`);
  }
  const clientIp = normaliseAddress(ip ?? req.ip);
  return { clientIp, ...(lat !== undefined && lon !== undefined ? { explicit: { lat, lon } } : {}) };
}

const SHOAL_ROUTES: readonly { path: string; want: Want }[] = [
  { path: '/nearest', want: 'squid' },
  { path: '/nearestverified', want: 'squid' },
  { path: '/nearestcvmfs', want: 'cvmfs' },
  { path: '/nearestconditions', want: 'frontier' },
];

export function buildHttp(deps: HttpDeps): FastifyInstance {
  const app = Fastify({
    logger: false,
    routerOptions: { ignoreTrailingSlash: true },
    trustProxy: deps.trustProxy,
  });
  const { registry, locator, metrics } = deps;

  // Discovery is not a proxy: an absolute-form request (`GET http://origin/healthz`) would be
  // answered from discovery's own routes, so a cache advertised at discovery's own address and
  // port would pass verification whenever --test-url's path is one of them.
  app.addHook('onRequest', async (req) => {
    if (!req.raw.url?.startsWith('/'))
      throw discoveryErrors.badQuery('discovery is not a proxy; send the path alone (origin-form)');
  });

  // A parameter given twice arrives as an array: refuse it plainly rather than guess which to use.
  app.addHook('preHandler', async (req) => {
    for (const [k, v] of Object.entries(req.query as Record<string, unknown>)) {
      if (Array.isArray(v)) throw discoveryErrors.badQuery(`give the query parameter "${k}" once`);
    }
  });

  app.setErrorHandler((err: Error & { code?: string; statusCode?: number }, _req, reply) => {
    if (err.code === 'ESTUARY_DISC_BAD_QUERY')
      return reply.code(400).send({ code: err.code, message: err.message });
    if (err.statusCode && err.statusCode < 500)
      return reply.code(err.statusCode).send({ message: err.message });
    deps.log.error({ err }, 'request failed');
    return reply.code(500).send({ message: 'internal error' });
  });

  for (const { path, want } of SHOAL_ROUTES) {
    const handler = async (req: Req, reply: FastifyReply) => {
      metrics.queries.inc({ endpoint: path });
      const answer = ask(registry, locator, {
        want,
        n: parseShoalN(req.params.n, registry.size),
        verifiedOnly: true,
        ranking: 'shoal',
        ...clientOf(req),
      });
      return reply.type('application/json').send(shoalNearest(answer));
    };
    app.get(path, handler);
    app.get(`${path}/:n`, handler);
  }

  // Shoal's /all/N route takes an N and ignores it; so does this one.
  const all = async (req: Req, reply: FastifyReply) => {
    metrics.queries.inc({ endpoint: '/all' });
    parseShoalN(req.params.n, registry.size);
    return reply.type('application/json').send(shoalAll(registry.values()));
  };
  app.get('/all', all);
  app.get('/all/:n', all);

  app.get('/wpad.dat', async (req: Req, reply: FastifyReply) => {
    metrics.queries.inc({ endpoint: '/wpad.dat' });
    const answer = ask(registry, locator, {
      want: 'squid',
      n: parseN(req.query.n, SHOAL_WPAD_COUNT),
      verifiedOnly: true,
      ranking: 'shoal',
      ...clientOf(req),
    });
    return reply.type(PAC_CONTENT_TYPE).send(shoalPac(answer));
  });

  app.get('/api/v1/caches', async (req: Req) => {
    metrics.queries.inc({ endpoint: '/api/v1/caches' });
    const q = req.query;
    const upstream = q.upstream ?? 'any';
    if (!['any', 'cvmfs', 'frontier'].includes(upstream))
      throw discoveryErrors.badQuery('upstream must be any, cvmfs or frontier');
    const client = clientOf(req);
    const answer = ask(registry, locator, {
      want: upstream === 'any' ? 'all' : (upstream as Want),
      n: parseN(q.n),
      verifiedOnly: q.verified !== 'false',
      holds: q.holds || undefined,
      ...client,
    });
    return apiNearest(answer, client.clientIp);
  });

  app.get('/api/v1/caches/:id', async (req: Req, reply: FastifyReply) => {
    const e = registry.get(req.params.id ?? '');
    if (!e)
      return reply.code(404).send({ code: 'ESTUARY_DISC_NO_SUCH_CACHE', message: 'no cache with that id' });
    return { version: API_VERSION, cache: apiCache(e) };
  });

  app.get('/api/v1/registry', async () => ({
    version: API_VERSION,
    caches: [...registry.values()].map((e) => apiCache(e)),
  }));
  app.get('/api/v1/schema', async () => apiSchemas());

  app.get('/', async (_req, reply: FastifyReply) =>
    reply.type('text/html; charset=utf-8').send(renderPage(registry.values(), Date.now(), deps.pageFacts())),
  );
  app.get('/caches/:id', async (req: Req, reply: FastifyReply) => {
    const e = registry.get(req.params.id ?? '');
    if (!e) return reply.code(404).type('text/plain; charset=utf-8').send('no cache with that id; see / for the list\n');
    return reply.type('text/html; charset=utf-8').send(renderCachePage(e, Date.now(), deps.pageFacts()));
  });

  app.get('/metrics', async (_req, reply: FastifyReply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
  app.get('/healthz', async () => deps.health());
  // Shoal's service for agents behind NAT: the address this request came from.
  app.get('/external_ip', async (req) => ({ external_ip: normaliseAddress(req.ip) }));
  return app;
}
