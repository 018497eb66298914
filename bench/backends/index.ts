// Opens the backend a run asked for: --endpoint (a real S3 over the real network), or a local
// server — s3rver, or Swift once its scripts are present — placed on loopback for `--network
// local`, or inside the emulated link's namespace behind the delaying relay for anything else.
// No permission for namespaces falls back to loopback and says so in the run's notes.

import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../lib/log.ts';
import { benchErrors } from '../errors.ts';
import { createLink, type EmulatedLink } from '../net/link.ts';
import { DEFAULT_WINDOW_BYTES } from '../net/relay.ts';
import { describeProfile, type NetworkProfile } from '../network-profile.ts';
import { startProcess } from '../proc.ts';
import type { Backend, ServerPlacement, StartedServer } from './backend.ts';
import { startS3rver } from './s3rver.ts';

export interface BackendRequest {
  readonly backend: 's3rver' | 'swift';
  readonly endpoint?: string;
  readonly network: NetworkProfile;
  readonly workDir: string;
  readonly log: Logger;
  /** Explanations for the report (fallbacks, emulation details). */
  readonly notes: string[];
}

const RELAY_MAIN = new URL('../net/relay-main.ts', import.meta.url).pathname;

function fromEnvironment(endpoint: string): Backend {
  const { AWS_ACCESS_KEY_ID: id, AWS_SECRET_ACCESS_KEY: secret } = process.env;
  if (!id || !secret) throw benchErrors.endpointCredentials();
  return {
    kind: 'endpoint',
    endpoint,
    accessKeyId: id,
    secretAccessKey: secret,
    region: process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1',
    network: `real network to ${new URL(endpoint).host}`,
    stop: async () => undefined,
  };
}

async function startServer(
  kind: BackendRequest['backend'],
  placement: ServerPlacement,
): Promise<StartedServer> {
  if (kind === 'swift') {
    const { startSwift } = await import('./swift.ts');
    return await startSwift(placement);
  }
  return await startS3rver(placement);
}

async function startRelayProcess(
  target: string,
  port: number,
  rttMs: number,
): Promise<{ port: number; stop(): Promise<void> }> {
  const child = startProcess('delay relay', process.execPath, [
    RELAY_MAIN,
    '127.0.0.1',
    target,
    String(port),
    String(rttMs),
    String(DEFAULT_WINDOW_BYTES),
  ]);
  const m = await child.waitFor(/relay listening on 127\.0\.0\.1:(\d+)/, 10_000);
  return { port: Number(m[1]), stop: async () => void (await child.stop('SIGTERM', 3000)) };
}

function backendFrom(
  server: StartedServer,
  endpoint: string,
  network: string,
  stop: () => Promise<void>,
): Backend {
  return { ...server, endpoint, network, stop };
}

export async function openBackend(req: BackendRequest): Promise<Backend> {
  if (req.endpoint) return fromEnvironment(req.endpoint);
  const dataDir = join(req.workDir, `${req.backend}-data`);
  await mkdir(dataDir, { recursive: true });
  const local = req.network.rttMs === 0 && req.network.bandwidthBps === undefined;
  let link: EmulatedLink | undefined;
  if (!local) {
    try {
      link = await createLink(req.network);
    } catch (err) {
      const why = (err as Error).message.split('\n')[0];
      req.notes.push(
        `network ${req.network.name} could not be emulated (${why}); fell back to --network local`,
      );
      req.log.warn({ err: why }, 'no network namespace: falling back to local');
    }
  }
  try {
    const server = await startServer(req.backend, {
      host: link ? link.namespaceAddress : '127.0.0.1',
      execPrefix: link ? link.execPrefix : [],
      dataDir,
    });
    if (!link) {
      return backendFrom(
        server,
        `http://127.0.0.1:${server.port}`,
        describeProfile({ name: 'local', rttMs: 0, bandwidthBps: undefined }),
        server.stop,
      );
    }
    const relay = await startRelayProcess(link.namespaceAddress, server.port, req.network.rttMs);
    const stop = async () => {
      await relay.stop();
      await server.stop();
      await link.close();
    };
    const network = `${describeProfile(req.network)} (${link.description}; tbf for the rate, relay on 127.0.0.1:${relay.port} for the latency)`;
    return backendFrom(server, `http://127.0.0.1:${relay.port}`, network, stop);
  } catch (err) {
    await link?.close();
    throw benchErrors.backendFailed(req.backend, (err as Error).message.split('\n')[0] ?? '');
  }
}
