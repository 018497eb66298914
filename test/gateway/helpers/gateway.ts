// Starts real gateways for tests: in this process (fast, inspectable) or as a child process
// (for kill -9). Both listen on a random loopback port with a fresh cache directory.

import { pino } from 'pino';
import { resolveConfig } from '../../../lib/config/resolve.ts';
import { gatewayOptions } from '../../../gateway/options.ts';
import { type Gateway, type GatewayConfig, startGateway } from '../../../gateway/server.ts';
import { onTeardown } from '../../helpers/cleanup.ts';
import { type Child, NODE, startChild } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/tmp.ts';

export const silent = pino({ level: 'silent' });

/** Config from the real option table (as flags would give it), plus a temp cache dir. */
export async function gatewayConfig(flags: Record<string, unknown> = {}): Promise<GatewayConfig> {
  const cacheDir = (flags.cacheDir as string | undefined) ?? (await tempDir('estuary-gw-'));
  const resolved = resolveConfig('gateway', gatewayOptions, {
    flags: { listen: '127.0.0.1:0', allowDest: ['@loopback'], ...flags, cacheDir },
    env: {},
  });
  return resolved.config as GatewayConfig;
}

export async function startTestGateway(flags: Record<string, unknown> = {}): Promise<Gateway> {
  const gw = await startGateway(await gatewayConfig(flags), silent);
  onTeardown(() => gw.stop());
  return gw;
}

export interface GatewayChild {
  readonly child: Child;
  readonly url: string;
}

/** `estuary gateway` as a real process, JSON logs on stderr; `env` adds to this process's environment. */
export async function startGatewayProcess(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<GatewayChild> {
  const dir = args.includes('--cache-dir') ? [] : ['--cache-dir', await tempDir('estuary-gw-')];
  const child = startChild(
    NODE,
    ['bin/estuary.js', 'gateway', '--listen', '127.0.0.1:0', '--log-format', 'json', ...dir, ...args],
    {
      cwd: new URL('../../../', import.meta.url).pathname,
      env: { ...process.env, ...env },
    },
  );
  const m = await child.waitFor(/"listen":"127\.0\.0\.1:(\d+)"/, 20_000);
  return { child, url: `http://127.0.0.1:${m[1]}` };
}
