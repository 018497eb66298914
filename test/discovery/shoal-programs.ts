// The real Shoal programs from PyPI, for the compatibility tests: scripts/ensure-shoal.sh makes
// (once) a virtualenv holding them, and a stand-in for a Squid that answers the CVMFS whitelist
// fetches both Shoal programs make through each cache, so nothing leaves this host.

import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { onTeardown } from '../helpers/cleanup.ts';
import { IN_CI, required } from '../helpers/services.ts';

const SCRIPT = new URL('../../scripts/ensure-shoal.sh', import.meta.url).pathname;

/** The virtualenv's directory, or why there is none (which fails the file in CI). */
export async function shoalVenv(): Promise<{ ok: boolean; dir: string; why?: string }> {
  try {
    const { stdout } = await promisify(execFile)('bash', [SCRIPT], { timeout: 240_000 });
    return { ok: true, dir: stdout.trim().split('\n').pop()! };
  } catch (err) {
    const why = String((err as { stderr?: string }).stderr ?? err).trim().split('\n').pop()!;
    if (IN_CI) throw new Error(`CI=true and the Shoal programs could not be installed: ${why}`, { cause: err });
    required('shoal-client/shoal-agent from PyPI', false, `bash scripts/ensure-shoal.sh (${why})`);
    return { ok: false, dir: '', why };
  }
}

/**
 * A forward proxy that answers every absolute-form GET for /cvmfs/<repo>/... with a body holding
 * the line `N<repo>`, which is what Shoal's functional tests look for in a .cvmfswhitelist, and
 * never forwards anything.
 */
export async function startWhitelistProxy(host = '127.0.0.1'): Promise<{ port: number; hits: () => number }> {
  let hits = 0;
  const server = createServer((req, res) => {
    const url = req.url ?? '';
    const repo = /^http:\/\/[^/]+\/cvmfs\/([^/]+)\//.exec(url)?.[1];
    if (!repo) {
      res.statusCode = 404;
      return res.end();
    }
    hits++;
    res.end(`20261121000000\nE20261221000000\nN${repo}\n--\n0123abcd\n`);
  });
  server.listen(0, host);
  await once(server, 'listening');
  onTeardown(() => new Promise<void>((r) => server.close(() => r())));
  return { port: (server.address() as AddressInfo).port, hits: () => hits };
}

/** A port nothing listens on: a cache there fails every functional test. */
export async function deadPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** The environment for a Shoal program: no proxy variables, which requests would otherwise use. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/_proxy$/i.test(k)) env[k] = v;
  return { ...env, ...extra };
}
