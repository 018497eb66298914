// What the agent reads from the cache it sits beside. An estuary gateway is asked over HTTP
// (/metrics for the bytes-sent counter, /estuary/v1/summary for what it holds); for Squid or
// Varnish the interface's transmitted bytes in /proc/net/dev stand in for bytes sent.

import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { type GatewaySummary, parseGatewaySummary } from '../lib/gateway-summary.ts';
import type { CacheKind } from '../lib/heartbeat.ts';
import { GATEWAY_METRICS, GATEWAY_PATHS } from '../lib/metric-names.ts';
import { isPlainHttpAnswer, notTlsError } from '../lib/tls-mismatch.ts';
import { type CounterSample, defaultRouteInterface, netDevTxBytes, promCounter } from './load.ts';

/** Reads beside a cache must not hold up a heartbeat: the gateway answers these in milliseconds. */
const READ_TIMEOUT_MS = 2000;

async function getText(url: string): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(READ_TIMEOUT_MS) });
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return res.text();
}

async function fetchSummary(cacheUrl: string): Promise<GatewaySummary | undefined> {
  return parseGatewaySummary(JSON.parse(await getText(new URL(GATEWAY_PATHS.summary, cacheUrl).href)));
}

export async function readGatewaySummary(cacheUrl: string): Promise<GatewaySummary | undefined> {
  return fetchSummary(cacheUrl).catch(() => undefined);
}

/**
 * 'auto': an estuary gateway if it serves a summary, else Squid (the common Shoal case). An
 * https:// --cache-url for a cache that speaks plain HTTP ends the agent at start: taken for a
 * Squid, it would advertise a cache whose summary it can never read.
 */
export async function detectKind(cacheUrl: string, wanted: CacheKind | 'auto'): Promise<CacheKind> {
  if (wanted !== 'auto') return wanted;
  try {
    return (await fetchSummary(cacheUrl)) ? 'estuary' : 'squid';
  } catch (err) {
    if (isPlainHttpAnswer(err)) throw notTlsError('--cache-url', cacheUrl);
    return 'squid';
  }
}

export interface LoadSource {
  readonly describe: string;
  sample(): Promise<CounterSample>;
}

export function gatewayLoadSource(cacheUrl: string): LoadSource {
  const url = new URL(GATEWAY_PATHS.metrics, cacheUrl).href;
  return {
    describe: `${url} ${GATEWAY_METRICS.bytesOut}`,
    async sample() {
      const bytes = promCounter(await getText(url), GATEWAY_METRICS.bytesOut);
      if (bytes === undefined) throw new Error(`${url} has no ${GATEWAY_METRICS.bytesOut}`);
      return { bytes, atMs: Date.now() };
    },
  };
}

export async function interfaceLoadSource(
  iface: string | undefined,
  procRoot = '/proc',
): Promise<LoadSource> {
  const name =
    iface ?? defaultRouteInterface(await readFile(`${procRoot}/net/route`, 'utf8').catch(() => '')) ?? 'eth0';
  return {
    describe: `${procRoot}/net/dev ${name} transmitted bytes`,
    async sample() {
      const bytes = netDevTxBytes(await readFile(`${procRoot}/net/dev`, 'utf8'), name);
      if (bytes === undefined) throw new Error(`interface ${name} is not in ${procRoot}/net/dev`);
      return { bytes, atMs: Date.now() };
    },
  };
}

/** Without a test URL the least proof of life: the cache port accepts a connection. */
export function portAnswers(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host, port });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}
