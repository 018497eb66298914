// `estuary gateway`: a CVMFS-aware caching HTTP proxy (forward and reverse), replacing Squid.

import { defineCommand } from '../lib/command.ts';
import { runUntilSignalled, type Service } from '../lib/lifecycle.ts';
import { probeListen } from '../lib/listen-probe.ts';
import { lockCacheDir } from './cache/lock.ts';
import { gatewayErrors } from './errors.ts';
import { expandCacheDir, gatewayOptions } from './options.ts';
import { startCluster } from './cluster/primary.ts';
import { mappingUnavailable } from '../lib/mapped-file.ts';
import { socketOptionsUnavailable } from '../lib/socket-options.ts';
import { cappedSendBuffer, readWmemMax } from './send-buffer.ts';
import { announce } from './announce.ts';
import { refuseSharedStoreBuckets } from './s3/setup.ts';

/** Stops `service`, then lets the next gateway have the cache directory. */
function releasingAfter(service: Service, release: () => void): Service {
  return {
    async stop(deadline) {
      try {
        await service.stop(deadline);
      } finally {
        release();
      }
    },
  };
}

export const command = defineCommand({
  name: 'gateway',
  summary: 'caching HTTP proxy for CVMFS and HTTP data (replaces Squid)',
  description:
    'Forward proxy on :3128 (clients keep CVMFS_HTTP_PROXY="http://host:3128"), CONNECT tunnels, and ' +
    'reverse mode in front of stratum 1s. Two-tier cache (memory + disk) that survives restarts and ' +
    'crashes, RFC 9111 freshness, CVMFS content verification, collapsed forwarding. Nothing is allowed ' +
    'until you list destinations (--allow-dest) or upstreams (--upstream). Serves /metrics, /healthz, ' +
    '/estuary/v1/summary, a status page at /estuary/v1/status (and / in forward mode) and the admin API. ' +
    'See docs/CACHING.md and docs/CVMFS.md.',
  examples: [
    {
      cmd: 'estuary gateway --allow-dest @cvmfs',
      what: 'site proxy for CVMFS and Frontier, like frontier-squid',
    },
    {
      cmd: 'estuary gateway --listen :8000 --upstream cvmfs=http://s1a:8000,http://s1b:8000',
      what: 'reverse proxy in front of two stratum 1s with failover',
    },
    {
      cmd: 'estuary gateway --allow-dest .example.org --disk-cache 100GiB --admin-token "$TOKEN"',
      what: 'bigger cache, admin API on',
    },
  ],
  options: gatewayOptions,
  async run({ config, log }) {
    // Once, before any worker: a replacement worker must not wait on the resolver.
    if (config.s3.length > 1) await refuseSharedStoreBuckets(config.s3);
    // Held by the primary for the gateway's whole life, before tmp/ is emptied: another gateway's
    // fills live there.
    const lock = await lockCacheDir(expandCacheDir(config.cacheDir), log);
    // A taken port is said in one line before any worker is forked.
    const { host, port } = config.listen;
    await probeListen(host, port).catch((err: NodeJS.ErrnoException) => {
      throw gatewayErrors.listen(`${host}:${port}`, err.code ?? String(err));
    });
    // Even one worker runs under the primary: a bug met while serving a request ends that worker,
    // which the primary replaces at once, instead of the whole service (gateway/cluster/).
    const handle = await startCluster(config, log, config.logLevel, config.logFormat);
    announce(
      log,
      { ...config, cacheDir: expandCacheDir(config.cacheDir) },
      handle.port,
      config.allowDest.length === 0 && config.upstream.length === 0,
      { workers: config.workers },
    );
    if (mappingUnavailable !== undefined) {
      log.warn({ why: mappingUnavailable }, 'disk hits are read into each worker instead of mapped from the page cache, at more CPU per hit');
    }
    const capped = cappedSendBuffer(config.sendBuffer, readWmemMax());
    if (capped !== undefined && socketOptionsUnavailable === undefined) log.warn({}, capped);
    if (socketOptionsUnavailable !== undefined && config.sendBuffer !== 'off') {
      log.warn({ why: socketOptionsUnavailable }, '--send-buffer has no effect: client connections keep the kernel\'s send buffers');
    }
    const service = releasingAfter(handle, lock.release);
    return Promise.race([runUntilSignalled(service, { log, shutdownTimeoutMs: config.shutdownTimeout }), handle.failed]);
  },
});
