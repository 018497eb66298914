// Load generators: wrk for cached throughput (one path, or a weighted CVMFS-like mix chosen per
// request by a Lua script), and a Node herd for the cold-start test that checks every byte.

import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { runCommand } from '../proc.ts';
import type { RunningPeer } from './peers.ts';

/** The request target for `path` on the origin, as this peer wants it. */
export function targetFor(peer: RunningPeer, originPort: number, path: string): string {
  return peer.mode === 'forward' ? `http://127.0.0.1:${originPort}${path}` : path;
}

export interface WrkResult {
  readonly requestsPerSec: number;
  /** Requests completed in the run. */
  readonly requests: number;
  readonly mibPerSec: number;
  readonly errors: string | undefined;
}

const UNITS: Record<string, number> = { B: 1 / 2 ** 20, KB: 1 / 1024, MB: 1, GB: 1024, TB: 1024 * 1024 };

export function parseWrk(out: string): WrkResult {
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out);
  const count = /(\d+) requests in/.exec(out);
  const tr = /Transfer\/sec:\s+([\d.]+)([KMGT]?B)/.exec(out);
  if (!rps || !tr || !count) throw new Error(`unexpected wrk output: ${out.slice(-300)}`);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(out);
  const sock = /Socket errors: ([^\n]+)/.exec(out);
  const errors = [non2xx ? `${non2xx[1]} non-2xx` : '', sock ? `socket errors ${sock[1]}` : '']
    .filter(Boolean)
    .join('; ');
  return {
    requestsPerSec: Number(rps[1]),
    requests: Number(count[1]),
    mibPerSec: Number(tr[1]) * UNITS[tr[2]!]!,
    errors: errors || undefined,
  };
}

/** Runs wrk with 2 threads against the peer; `targets` are weighted request targets. */
export async function runWrk(
  peer: RunningPeer,
  dir: string,
  targets: readonly string[],
  connections: number,
  seconds: number,
): Promise<WrkResult> {
  const script = join(dir, `wrk-${peer.name}-${targets.length}.lua`);
  const lua =
    targets.length === 1
      ? `wrk.path = ${JSON.stringify(targets[0])}\n`
      : `local paths = {${targets.map((t) => JSON.stringify(t)).join(',')}}\nlocal n = #paths\nrequest = function() return wrk.format("GET", paths[math.random(n)]) end\n`;
  await writeFile(script, lua);
  const r = await runCommand(
    'wrk',
    ['-t2', `-c${connections}`, `-d${seconds}s`, '-s', script, `http://127.0.0.1:${peer.port}`],
    { timeoutMs: (seconds + 60) * 1000 },
  );
  if (r.code !== 0) throw new Error(`wrk failed: ${r.output.slice(-300)}`);
  return parseWrk(r.output);
}

export interface FetchResult {
  readonly status: number;
  readonly ok: boolean;
}

/** GETs `target` through the peer and compares the body with `expected` as it streams in. */
export function fetchCompare(
  peer: RunningPeer,
  target: string,
  expected: Buffer,
  signal?: AbortSignal,
): Promise<FetchResult> {
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port: peer.port, path: target, agent: false, headers: { host: '127.0.0.1' }, signal },
      (res) => {
        let off = 0;
        let same = true;
        res.on('data', (c: Buffer) => {
          if (same && (off + c.length > expected.length || c.compare(expected, off, off + c.length) !== 0))
            same = false;
          off += c.length;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, ok: same && res.complete && off === expected.length }),
        );
        res.on('error', () => resolve({ status: res.statusCode ?? 0, ok: false }));
        res.on('aborted', () => resolve({ status: res.statusCode ?? 0, ok: false }));
      },
    );
    req.on('error', () => resolve({ status: 0, ok: false }));
    req.end();
  });
}

export interface HerdResult {
  readonly exact: number;
  readonly seconds: number;
}

/**
 * N clients at once ask for one uncached object; counts those that got exactly its bytes. An abort
 * (SIGINT/SIGTERM) cuts every client at once: a slow proxy can take an hour over a full herd.
 */
export async function herd(
  peer: RunningPeer,
  target: string,
  expected: Buffer,
  clients: number,
  signal?: AbortSignal,
): Promise<HerdResult> {
  const started = performance.now();
  const results = await Promise.all(
    Array.from({ length: clients }, () => fetchCompare(peer, target, expected, signal)),
  );
  return { exact: results.filter((r) => r.ok).length, seconds: (performance.now() - started) / 1000 };
}
