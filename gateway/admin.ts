// The gateway's own endpoints, served by Fastify on origin-form paths (GATEWAY_PATHS): metrics,
// health, the summary the agent reads, and the token-protected admin API (stats, purge).

import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../lib/log.ts';
import { GATEWAY_PATHS } from '../lib/metric-names.ts';
import type { Cache } from './cache/cache.ts';
import { purgeSpelling, reverseKey } from './cache/key.ts';
import type { GatewayView } from './cluster/messages.ts';
import { GATEWAY_HTTP_CODES as CODES } from './errors.ts';
import type { Metrics } from './metrics.ts';
import { proxyStatus } from './proxy/respond.ts';
import type { Ring } from './proxy/target.ts';
import { MAX_PREFETCH_ITEMS, type PrefetchOutcome } from './prefetch.ts';
import { holdingsOf } from './holdings.ts';
import { summarise } from './summary.ts';

/** Wrong tokens allowed per client address within FAILURE_WINDOW_MS before it is refused. */
const MAX_FAILURES = 5;
/** A client over the limit waits this long (and so does a token guesser: 5 tries a minute). */
const FAILURE_WINDOW_MS = 60_000;

/** Counts failed admin logins per client address, in a bounded map. */
class FailedLogins {
  readonly #by = new LRUCache<string, { n: number; since: number }>({ max: 10_000 });

  blocked(addr: string, now: number): boolean {
    const f = this.#by.get(addr);
    return f !== undefined && f.n >= MAX_FAILURES && now - f.since < FAILURE_WINDOW_MS;
  }

  /** Records a failure; returns how many this address has in the current window. */
  fail(addr: string, now: number): number {
    const f = this.#by.get(addr);
    if (!f || now - f.since >= FAILURE_WINDOW_MS) {
      this.#by.set(addr, { n: 1, since: now });
      return 1;
    }
    f.n++;
    return f.n;
  }
}

export interface AdminDeps {
  readonly cache: Cache;
  readonly metrics: Metrics;
  readonly rings: readonly Ring[];
  readonly adminToken?: string;
  readonly startedAt: number;
  /** In a multi-worker gateway: every worker's metrics, gathered by the primary. */
  readonly clusterView?: () => Promise<GatewayView>;
  readonly log: Logger;
  readonly prefetch: (urls: readonly string[]) => Promise<PrefetchOutcome[]>;
  /** Bytes at the store under an s3:// input, when this gateway serves its bucket. */
  readonly sizeOf?: (url: string) => Promise<{ bytes: number; objects: number } | undefined>;
  /** The status page's HTML (gateway/status/). */
  readonly statusPage: () => Promise<string>;
}

/** Inputs one holdings request may name: a coordinator asks for the pending jobs' distinct inputs. */
const MAX_HOLDINGS_ITEMS = 1000;

function tokenMatches(expected: string, header: string | undefined): boolean {
  const got = /^Bearer\s+(.+)$/i.exec(header ?? '')?.[1] ?? '';
  const a = Buffer.from(got);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function deny(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply
    .code(status)
    .header('proxy-status', proxyStatus('http_request_denied', message))
    .send({ error: code, message });
}

export function stats(deps: AdminDeps) {
  const { cache } = deps;
  const { bytes, objects, unread } = cache.disk.held;
  return {
    uptimeSeconds: Math.round((Date.now() - deps.startedAt) / 1000),
    memory: { bytes: cache.memory.bytes, objects: cache.memory.count },
    // While the index is read, the files still to read count as objects whose bytes are unknown.
    disk: { bytes, objects, ...(unread > 0 ? { indexUnreadFiles: unread } : {}) },
    fillsInFlight: cache.fills.size,
  };
}

/** How a purge answers: what it removed, and what it could not look into (never a quiet success). */
function purged(deps: AdminDeps, n: number): { purged: number; unreadable?: string[]; message?: string } {
  const unreadable = deps.cache.disk.unindexed;
  if (unreadable.length === 0) return { purged: n };
  return {
    purged: n,
    unreadable,
    message:
      "the cache could not read these paths, so what they hold was not purged; give the gateway's user read access to them (or remove them) and purge again",
  };
}

/**
 * Purge targets: absolute URLs spelt as they are keyed (key.ts, purgeSpelling); an origin-form
 * path means that path in every ring.
 */
function purgeKeys(deps: AdminDeps, value: string, prefix: boolean): string[] {
  if (!value.startsWith('/')) return [purgeSpelling(value, prefix)];
  return deps.rings.map((r) => reverseKey(r.name, value));
}

/** Methods a gateway page may be asked with; those a path has are listed in a 405's Allow. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const;

/**
 * The gateway's own answer for a path or method it does not serve, in the admin API's shape: a
 * known path asked with another method gets 405 and Allow (RFC 9110 §15.5.6), anything else 404.
 */
function notServed(app: FastifyInstance, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const url = req.url.split('?')[0]!;
  const allow = METHODS.filter((method) => app.hasRoute({ url, method }));
  if (allow.length > 0) {
    return reply
      .code(405)
      .header('allow', allow.join(', '))
      .send({ error: CODES.method, message: `${req.method} is not served at ${url}; use ${allow.join(' or ')}` });
  }
  return reply.code(404).send({
    error: CODES.noSuchPath,
    message: `this gateway has no page at ${url}; its pages are ${GATEWAY_PATHS.status}, ${GATEWAY_PATHS.metrics}, ${GATEWAY_PATHS.health} and ${GATEWAY_PATHS.summary}`,
  });
}

export function registerRoutes(app: FastifyInstance, deps: AdminDeps): void {
  const failures = new FailedLogins();
  app.setNotFoundHandler((req, reply) => notServed(app, req, reply));
  app.get(GATEWAY_PATHS.metrics, async (_req, reply) => {
    await deps.cache.disk.listed();
    if (!deps.clusterView) return reply.header('content-type', deps.metrics.registry.contentType).send(await deps.metrics.text());
    const view = await deps.clusterView();
    // Sums without a worker would drop, and Prometheus would take the drop for a counter reset:
    // a failed scrape (up == 0) is the truthful answer, as the exporter guidelines advise.
    if (view.missing.length > 0) {
      return reply
        .code(503)
        .header('content-type', 'text/plain; charset=utf-8')
        .send(`no metrics: ${view.missing.join('; ')}; partial sums would look like counter resets (the status page shows what was gathered)\n`);
    }
    return reply.header('content-type', deps.metrics.registry.contentType).send(view.text);
  });
  app.get(GATEWAY_PATHS.health, async () => ({ status: 'ok' }));
  // '/' reaches Fastify only where it cannot be a proxy request (forward mode; see server.ts).
  for (const path of [GATEWAY_PATHS.status, '/']) {
    app.get(path, async (_req, reply) => {
      reply.header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store');
      return deps.statusPage();
    });
  }
  app.get(GATEWAY_PATHS.summary, async () => {
    await deps.cache.disk.listed();
    const held = deps.cache.disk.held;
    return summarise(deps.cache.disk.totals, deps.cache.memory.bytes, held.bytes, held.objects);
  });
  app.register(
    async (admin) => {
      admin.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
        if (!deps.adminToken) {
          return deny(
            reply,
            403,
            CODES.adminDisabled,
            'admin API is off: start the gateway with --admin-token',
          );
        }
        const addr = req.socket.remoteAddress ?? '?';
        const now = Date.now();
        if (failures.blocked(addr, now)) {
          return deny(reply, 429, CODES.adminLocked, 'too many wrong admin tokens; wait a minute');
        }
        if (!tokenMatches(deps.adminToken, req.headers.authorization)) {
          const n = failures.fail(addr, now);
          if (n <= MAX_FAILURES) {
            deps.log.warn({ client: addr, path: req.url, failures: n }, 'admin API: wrong or missing token');
          }
          return deny(reply, 401, CODES.adminToken, 'missing or wrong bearer token for the admin API');
        }
      });
      admin.get('/stats', async () => {
        await deps.cache.disk.listed();
        return stats(deps);
      });
      admin.post('/prefetch', async (req, reply) => {
        const urls = (req.body as { urls?: unknown } | undefined)?.urls;
        if (!Array.isArray(urls) || urls.length === 0 || urls.length > MAX_PREFETCH_ITEMS || !urls.every((u) => typeof u === 'string')) {
          return reply.code(400).send({
            error: CODES.adminRequest,
            message: `send JSON {"urls": [...]} with 1 to ${MAX_PREFETCH_ITEMS} HTTP URLs, /paths (reverse mode) or s3://bucket/key and s3://bucket/prefix/`,
          });
        }
        const results = await deps.prefetch(urls as string[]);
        const count = (r: PrefetchOutcome['result']) => results.filter((x) => x.result === r).length;
        return {
          stored: count('stored') + count('revalidated'),
          cached: count('cached'),
          notStored: count('not-stored'),
          failed: count('failed') + count('refused'),
          results,
        };
      });
      // What the cache holds of each named input, and (with sizes: true) how big each s3:// input
      // is at the store: the coordinator places work where its data is (docs/COORDINATOR.md).
      admin.post('/holdings', async (req, reply) => {
        const body = (req.body ?? {}) as { urls?: unknown; sizes?: unknown };
        const urls = body.urls;
        if (!Array.isArray(urls) || urls.length === 0 || urls.length > MAX_HOLDINGS_ITEMS || !urls.every((u) => typeof u === 'string' && u !== '')) {
          return reply.code(400).send({
            error: CODES.adminRequest,
            message: `send JSON {"urls": [...], "sizes": false} with 1 to ${MAX_HOLDINGS_ITEMS} URLs or prefixes (s3://, http(s)://, cvmfs://repo)`,
          });
        }
        // As a purge does: what a replacement worker has not read yet is held too.
        await deps.cache.disk.whenRead();
        const held = await holdingsOf(deps.cache.entries(), urls as string[]);
        if (body.sizes !== true || !deps.sizeOf) return { holdings: held };
        const sized = await Promise.all(
          held.map(async (h) => {
            if (!h.url.startsWith('s3://')) return h;
            try {
              const size = await deps.sizeOf!(h.url);
              return size ? { ...h, size: size.bytes } : h;
            } catch (err) {
              return { ...h, sizeError: (err as Error).message };
            }
          }),
        );
        return { holdings: sized };
      });
      admin.post('/purge', async (req, reply) => {
        const body = (req.body ?? {}) as { url?: unknown; prefix?: unknown };
        if (typeof body.url === 'string') {
          return purged(deps, await deps.cache.purgeKeys(purgeKeys(deps, body.url, false)));
        }
        if (typeof body.prefix === 'string' && body.prefix !== '') {
          const counts = await Promise.all(purgeKeys(deps, body.prefix, true).map((p) => deps.cache.purgePrefix(p)));
          return purged(deps, counts.reduce((n, c) => n + c, 0));
        }
        return reply
          .code(400)
          .send({ error: CODES.adminRequest, message: 'send JSON {"url": "..."} or {"prefix": "..."}' });
      });
    },
    { prefix: GATEWAY_PATHS.admin },
  );
}
