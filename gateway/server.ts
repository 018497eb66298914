// Assembles a gateway: cache tiers, upstream pools, the proxy handler, Fastify for the gateway's
// own endpoints, CONNECT tunnels, and the listening socket. Origin-form requests for
// GATEWAY_PATHS go to Fastify; everything else (absolute URIs, reverse-mode paths) to the proxy.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import Fastify from 'fastify';
import type { ConfigOf } from '../lib/config/options.ts';
import type { Logger } from '../lib/log.ts';
import { GATEWAY_PATHS } from '../lib/metric-names.ts';
import { ClientAcl, DestAcl } from './acl.ts';
import { registerRoutes } from './admin.ts';
import { admitConnections } from './admission.ts';
import { Cache } from './cache/cache.ts';
import { DiskStore, probeWritable } from './cache/disk-store.ts';
import { MemoryStore } from './cache/memory-store.ts';
import { handleConnect } from './connect.ts';
import { gatewayErrors } from './errors.ts';
import { openAccessLog } from './access-log.ts';
import { startMemoryReclaim } from './memory-reclaim.ts';
import { Metrics } from './metrics.ts';
import { WorkerCoordinator } from './cluster/coordinator.ts';
import { Intake } from './cluster/intake.ts';
import type { GatewayView, ProcessReport, ToPrimary } from './cluster/messages.ts';
import { announce } from './announce.ts';
import { expandCacheDir, type gatewayOptions } from './options.ts';
import { prefetchAll } from './prefetch.ts';
import { crashHookMatches, whileServing } from './request-context.ts';
import { FrontReader } from './front-reader.ts';
import { PlainHits } from './proxy/plain-hit.ts';
import { ProxyHandler } from './proxy/handler.ts';
import { sendError } from './proxy/respond.ts';
import { clientErrorResponse, refused } from './refusals.ts';
import { ringsFrom } from './proxy/target.ts';
import { S3Endpoint } from './s3/endpoint.ts';
import { readIssuerKey, upstreamBuckets } from './s3/setup.ts';
import { HashRing } from './ring.ts';
import { statusPage } from './status/serve.ts';
import { Upstreams } from './upstream.ts';

export type GatewayConfig = ConfigOf<typeof gatewayOptions>;

const STALLED = {
  claim: 'no answer from the primary to a claim; fetching here',
  follow: 'a fill followed in another worker went silent; fetching here',
  invalidate: 'the primary did not confirm an invalidation in time; the write is recorded on disk and answered',
} as const;

export interface Gateway {
  readonly url: string;
  readonly port: number;
  readonly cache: Cache;
  readonly metrics: Metrics;
  readonly upstreams: Upstreams;
  /** Set in a worker of a multi-worker gateway. */
  readonly coordinator?: WorkerCoordinator;
  /** This process's numbers and view of the upstreams, for the primary's gathering. */
  report(): Promise<ProcessReport>;
  stop(deadline?: AbortSignal): Promise<void>;
}

/** Node's header limit; larger request heads get 431 (squid's default is 64 KiB, CVMFS sends < 1 KiB). */
const MAX_HEADER_BYTES = 16 * 1024;
/** CVMFS clients keep connections open between bursts of requests. */
const KEEP_ALIVE_MS = 65_000;

/** How long a worker waits for the primary to answer a claim before it fetches on its own. */
const CLAIM_DEADLINE_MS = 5000;
/** A followed fill may be silent for the upstream's own limits plus this, then it is given up. */
const FOLLOW_SLACK_MS = 10_000;

/**
 * The gateway's own paths. `/` is the status page only in forward mode: there an origin-form
 * request is no proxy request, while in reverse mode `/` belongs to the upstream's site.
 */
function isOwnPath(url: string | undefined, forward: boolean): boolean {
  if (url?.[0] !== '/') return false;
  // Whole paths, whatever the query (a Prometheus job may send `params:`): a site's own
  // /healthzone/ or /metrics.html belongs to its upstream.
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  return (forward && path === '/') || path === GATEWAY_PATHS.metrics || path === GATEWAY_PATHS.health || path.startsWith('/estuary/v1/');
}

const S3_METHODS = new Set(['GET', 'HEAD', 'PUT', 'POST', 'DELETE']);

function countS3(metrics: Metrics, method: string, status: number): void {
  metrics.s3Requests.inc({ method: S3_METHODS.has(method) ? method : 'other', status_class: `${Math.floor(status / 100)}xx` });
}


/** How a worker of a multi-worker gateway (gateway/cluster/) reaches its primary. */
export interface WorkerLink {
  readonly send: (m: ToPrimary) => void;
  /** Whether this worker reports the (shared, replicated) disk gauges; exactly one worker does. */
  diskMetrics: boolean;
  /** Started in place of a worker that died: it serves while its index loads. */
  readonly replacement?: boolean;
  /**
   * What the primary sent while the index was being read (invalidations and evictions), applied
   * in order once it is: an invalidation then drops what the scan just took.
   * Set to undefined when handed over.
   */
  early?: unknown[];
}

export async function startGateway(given: GatewayConfig, log: Logger, worker?: WorkerLink): Promise<Gateway> {
  const config = { ...given, cacheDir: expandCacheDir(given.cacheDir) };
  try {
    await probeWritable(config.cacheDir);
  } catch (err) {
    throw gatewayErrors.cacheDir(config.cacheDir, (err as NodeJS.ErrnoException).code ?? String(err));
  }
  if (config.peers.length > 0 && (!config.peerSelf || !config.peers.includes(config.peerSelf))) {
    throw gatewayErrors.peerSelf();
  }
  // Read before anything starts, so a missing key stops start-up with nothing to clean up.
  const s3Keys =
    config.s3.length > 0
      ? {
          buckets: upstreamBuckets(config.s3, config.s3Credentials, config.s3Region),
          issuerKey: readIssuerKey(config.s3IssuerKeyFile),
        }
      : undefined;
  const accessLog = config.accessLog === undefined ? undefined : openAccessLog(config.accessLog);
  // SIGHUP (a closing terminal, logrotate's postrotate) reopens the access log and is otherwise
  // ignored; in a cluster the primary relays it as a message.
  const reopenLogs = () => {
    try {
      accessLog?.reopen();
      log.info({}, 'SIGHUP: access log reopened');
    } catch (err) {
      log.error({ err: String(err) }, 'SIGHUP: cannot reopen the access log; still writing to the old file');
    }
  };
  // A worker also gets a terminal's HUP (its process group), but acts on the primary's message.
  const onHup = worker ? () => undefined : reopenLogs;
  process.on('SIGHUP', onHup);
  if (worker) {
    process.on('message', (m: { t?: unknown } | null) => {
      if (m?.t === 'reopen-logs') reopenLogs();
    });
  }
  const disk = new DiskStore(config.cacheDir, config.diskCache, log);
  // Workers must not empty tmp/: another worker may be filling there. The primary did it.
  await disk.prepare(!worker);
  // A replacement worker serves while its index loads (misses, and other workers' fills
  // meanwhile), so it answers within a second or two however many entries the cache holds. At
  // start-up the index is read before the gateway listens: its first requests find what it holds.
  const loading = disk.load();
  const background = worker?.replacement === true;
  const unusable = (err: unknown) => gatewayErrors.cacheDir(config.cacheDir, (err as NodeJS.ErrnoException).code ?? String(err));
  const opened = background ? { entries: 0, bytes: 0 } : await loading.catch((err: unknown) => Promise.reject(unusable(err)));
  if (background) loading.catch((err: unknown) => log.error({ err: unusable(err).message }, 'cannot read the cache index; serving without it'));
  const workers = worker ? config.workers : 1;
  const memory = new MemoryStore(Math.floor(config.memCache / workers), config.memObjectMax);
  const cache = new Cache(memory, disk);
  const metrics = new Metrics({
    memoryBytes: () => memory.bytes,
    memoryObjects: () => memory.count,
    diskBytes: () => (!worker || worker.diskMetrics ? disk.held.bytes : 0),
    diskObjects: () => (!worker || worker.diskMetrics ? disk.held.objects : 0),
    diskIndexBytes: () => disk.indexBytes,
    diskUnread: () => disk.held.unread,
    diskMapped: () => cache.mapped.bytes,
    mappingUnavailable: () => cache.mapped.unavailable,
  });
  const coordinator = worker
    ? new WorkerCoordinator(cache, worker.send, {
        claimDeadlineMs: CLAIM_DEADLINE_MS,
        followSilenceMs: Math.max(config.responseTimeout, config.idleTimeout) + FOLLOW_SLACK_MS,
        onStall: (what, key) => {
          metrics.guardFired.inc({ guard: what });
          log.warn({ key, what }, STALLED[what]);
        },
      })
    : undefined;
  if (coordinator) {
    cache.coordinator = coordinator;
    const early = worker?.early ?? [];
    if (worker) worker.early = undefined;
    process.on('message', (m) => coordinator.onMessage(m));
    for (const m of early) coordinator.onMessage(m);
  }
  const upstreams = new Upstreams(
    {
      connectTimeoutMs: config.connectTimeout,
      responseTimeoutMs: config.responseTimeout,
      idleTimeoutMs: config.idleTimeout,
      failoverBackoffMs: config.failoverBackoff,
    },
    metrics,
  );
  const rings = ringsFrom(config.upstream);
  const forward = rings.length === 0;
  const clientAcl = new ClientAcl(config.allowClient);
  const destAcl = new DestAcl(config.allowDest);
  const peers = config.peers.length > 0 ? { ring: new HashRing(config.peers), self: config.peerSelf! } : undefined;
  const handler = new ProxyHandler({
    cache,
    upstreams,
    metrics,
    log,
    maxObjectSize: config.maxObjectSize,
    heuristicMaxS: Math.floor(config.heuristicMax / 1000),
    staleIfErrorS: Math.floor(config.staleIfError / 1000),
    targetedCacheControl: config.targetedCacheControl,
    destAcl,
    rings,
    peers,
    accessLog: accessLog?.write,
    s3BlockSize: config.s3BlockSize,
  });

  const s3 = s3Keys
    ? new S3Endpoint({
          ...s3Keys,
          maxSkewMs: config.s3MaxSkew,
          revalidateS: Math.floor(config.s3Revalidate / 1000),
          handler,
          upstreams,
          log,
        })
    : undefined;
  // Counted and logged on 'close' like every proxied request: an answer cut by its client never
  // emits 'finish'.
  const serveS3 = (req: IncomingMessage, res: ServerResponse) => {
    handler.account(req, res);
    res.once('close', () => countS3(metrics, req.method ?? '?', res.statusCode));
    s3!.handle(req, res);
  };
  const refuseMalformed = (err: NodeJS.ErrnoException, socket: Socket) => {
    log.info({ code: err.code, client: socket.remoteAddress }, 'refused a malformed request');
    if (socket.writable) socket.end(clientErrorResponse(err));
    else socket.destroy();
  };
  // Plain reads of fresh objects in memory are answered before node:http reads them (front-reader.ts).
  const plain = new PlainHits(
    { cache, metrics, heuristicMaxS: Math.floor(config.heuristicMax / 1000), peers, accessLog: accessLog?.write },
    handler.targets,
    KEEP_ALIVE_MS,
  );
  const front = config.frontHits
    ? new FrontReader({
        answer: (head, socket) =>
          isOwnPath(head.target, forward) || s3?.matchesTarget(head.target, head.headers.host) || crashHookMatches(head.target)
            ? undefined
            : plain.answer({ method: head.method, target: head.target, headers: head.headers, client: socket.remoteAddress }),
        maxHeadBytes: MAX_HEADER_BYTES,
        // node:http's own keep-alive timer, with the second of slack it adds.
        idleMs: KEEP_ALIVE_MS + 1000,
        headersTimeoutMs: config.headersTimeout,
        onSlowHead: (socket) => refuseMalformed(Object.assign(new Error('no request head in time'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket),
        log,
      })
    : undefined;
  let server!: Server;
  // In a worker, connections come from the primary, which holds the listening socket.
  const intake = worker ? new Intake() : undefined;
  const app = Fastify({
    logger: false,
    serverFactory: (fastifyHandler) => {
      const onRequest = (req: IncomingMessage, res: ServerResponse) =>
        whileServing(req, () => {
        front?.started(req, res);
        // Refused at accept time; a request that was parsed anyway gets nothing more.
        if (refused.has(req.socket)) res.destroy();
        else if (req.headers.host === undefined && req.httpVersionMinor >= 1 && req.httpVersionMajor === 1) {
          // RFC 9112 §3.2: a 1.1 request without Host gets 400, whatever its target.
          res.setHeader('connection', 'close');
          sendError(res, 400, 'http_request_error', 'an HTTP/1.1 request needs a Host header');
        } else if (isOwnPath(req.url, forward)) fastifyHandler(req, res);
        else if (s3?.matches(req)) serveS3(req, res);
        else handler.handle(req, res);
        });
      // Host is checked in onRequest, so the refusal carries Proxy-Status like every other one.
      // A request head that trickles in (slowloris) holds a connection slot and a descriptor:
      // --headers-timeout bounds it, checked every second rather than Node's default 30 s.
      server = createServer(
        {
          maxHeaderSize: MAX_HEADER_BYTES,
          keepAliveTimeout: KEEP_ALIVE_MS,
          requireHostHeader: false,
          headersTimeout: config.headersTimeout,
          // Node's default cuts any request whose body takes over 300 s: a 5 GB PutObject from a
          // cloud job over a 10 MB/s link would never arrive. A stalled body is bounded by the
          // proxy's own idle timeouts instead.
          requestTimeout: 0,
          connectionsCheckingInterval: 1000,
          // A request without Content-Length or Transfer-Encoding has no body: its stream starts
          // ended (and reads as destroyed), so a GET costs no body stream's events. A body is
          // forwarded by its request's body headers (pass.ts), whatever Node does here.
          optimizeEmptyRequests: true,
        },
        onRequest,
      );
      // Expect: 100-continue is answered by node:http itself, except for S3 requests: their 100
      // waits for the store's (s3/expect-upload.ts), so a store's refusal reaches the client.
      server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
        if (!refused.has(req.socket) && req.headers.host !== undefined && !isOwnPath(req.url, forward) && s3?.matches(req)) return serveS3(req, res);
        res.writeContinue();
        onRequest(req, res);
      });
      admitConnections(server, {
        clientAcl,
        maxConnections: config.maxConnections,
        sendBuffer: config.sendBuffer,
        intake,
        front,
        log,
      });
      return server;
    },
    clientErrorHandler: (err: NodeJS.ErrnoException, socket: Socket) => refuseMalformed(err, socket),
  });
  metrics.diskEvictions = () => disk.evictions;
  const startedAt = Date.now();
  // What only this process knows; with --workers N the primary gathers it from every worker.
  const known = () => ({ errors: [...upstreams.lastError], down: upstreams.downServers(), diskFull: disk.full });
  // A report waits for a read of the index under way to list its files, so it counts them.
  const report = async (): Promise<ProcessReport> => {
    await disk.listed();
    return { metrics: await metrics.registry.getMetricsAsJSON(), ...known() };
  };
  const view = coordinator
    ? () => coordinator.view()
    : async (): Promise<GatewayView> => ({ text: await metrics.text(), missing: [], ...known() });
  registerRoutes(app, {
    cache,
    metrics,
    rings,
    adminToken: config.adminToken,
    startedAt,
    clusterView: coordinator ? view : undefined,
    statusPage: () =>
      statusPage({
        cache,
        view,
        startedAt,
        cacheDir: config.cacheDir,
        memMax: config.memCache,
        diskMax: config.diskCache,
        workers: worker ? config.workers : 0,
        rings,
        allowDest: config.allowDest,
        s3Buckets: config.s3.map((b) => b.name),
      }),
    log,
    prefetch: (urls) => prefetchAll({ handler, rings, destAcl, s3 }, urls),
    ...(s3 ? { sizeOf: (url: string) => s3.sizeOf(url) } : {}),
  });
  server.on('connect', (req, socket, head) =>
    handleConnect(
      { clientAcl, destAcl, ports: config.connectPorts, connectTimeoutMs: config.connectTimeout, log },
      req,
      socket,
      head,
    ),
  );
  const listenAddr = `${config.listen.host}:${config.listen.port}`;
  try {
    if (intake) await app.listen({ path: await intake.path(), exclusive: true });
    else await app.listen({ host: config.listen.host, port: config.listen.port });
  } catch (err) {
    upstreams.destroy();
    throw gatewayErrors.listen(listenAddr, (err as NodeJS.ErrnoException).code ?? String(err));
  }
  const port = intake ? config.listen.port : (server.address() as AddressInfo).port;
  intake?.start(server);
  const reclaim = startMemoryReclaim(() => metrics.activity());
  metrics.memoryReclaims = () => reclaim.runs;
  if (worker) log.debug({ port }, 'worker ready');
  else {
    announce(log, config, port, destAcl.empty && rings.length === 0, {
      diskEntries: opened.entries,
      diskBytes: opened.bytes,
    });
  }
  const host = config.listen.host === '0.0.0.0' ? '127.0.0.1' : config.listen.host;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    cache,
    metrics,
    upstreams,
    coordinator,
    report,
    async stop(deadline) {
      const onAbort = () => {
        front?.closeAll();
        server.closeAllConnections();
        upstreams.destroy();
      };
      deadline?.addEventListener('abort', onAbort, { once: true });
      reclaim.stop();
      const closeIdle = () => {
        front?.closeIdle();
        server.closeIdleConnections();
      };
      closeIdle();
      await app.close();
      await intake?.drain(closeIdle, deadline);
      await upstreams.close();
      process.off('SIGHUP', onHup);
      await accessLog?.close();
      deadline?.removeEventListener('abort', onAbort);
    },
  };
}
