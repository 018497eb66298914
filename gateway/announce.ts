// The gateway's start-up line, in a file of its own: the primary prints it, and importing the
// whole server (Fastify, undici, the proxy) for one log line would cost the primary ~50 MB.

import type { Logger } from '../lib/log.ts';
import type { GatewayConfig } from './server.ts';

/** The start-up line; when nothing is allowed yet it says how to allow destinations. */
export function announce(
  log: Logger,
  config: GatewayConfig,
  port: number,
  nothingAllowed: boolean,
  extra: Record<string, unknown> = {},
): void {
  log.info(
    {
      listen: `${config.listen.host}:${port}`,
      cacheDir: config.cacheDir,
      upstreams: config.upstream.map((r) => r.name),
      ...extra,
    },
    nothingAllowed
      ? 'gateway listening; no destination is allowed yet: add --allow-dest @cvmfs or --allow-dest HOST (or --upstream NAME=URL for reverse mode)'
      : 'gateway listening',
  );
}
