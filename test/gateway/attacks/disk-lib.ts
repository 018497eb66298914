// Shared pieces for the attacks on the gateway's disk tier: an origin whose answers each test
// writes, plain GETs through the gateway, the files under <cache-dir>/v1 and what they take.

import { execFileSync } from 'node:child_process';
import http from 'node:http';
import type net from 'node:net';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { onTeardown } from '../../helpers/cleanup.ts';

export type OriginHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** An origin on a random loopback port; `handle` answers every request. */
export async function origin(handle: OriginHandler): Promise<number> {
  const srv = http.createServer(handle);
  srv.keepAliveTimeout = 1000;
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  onTeardown(async () => {
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  });
  return (srv.address() as net.AddressInfo).port;
}

export interface Got {
  status: number;
  headers: http.IncomingHttpHeaders;
  raw: string[];
  body: Buffer;
  /** the response was cut before its end */
  error?: string;
}

/** GET `path` from a reverse-mode gateway on `port`. */
export function get(port: number, path: string, headers: Record<string, string> = {}, timeoutMs = 20_000): Promise<Got> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      const parts: Buffer[] = [];
      let error: string | undefined;
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
      res.on('aborted', () => (error = 'aborted'));
      res.on('close', () => {
        clearTimeout(timer);
        if (!res.complete) error ??= 'incomplete';
        resolve({ status: res.statusCode ?? 0, headers: res.headers, raw: res.rawHeaders, body: Buffer.concat(parts), error });
      });
    });
    const timer = setTimeout(() => req.destroy(new Error('timeout')), timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ status: 0, headers: {}, raw: [], body: Buffer.alloc(0), error: e.code ?? e.message });
    });
  });
}

/** Every entry file under <cache-dir>/v1/<xx>/ (not tmp/, not written/). */
export function entryFiles(cacheDir: string): string[] {
  const root = join(cacheDir, 'v1');
  const out: string[] = [];
  let subs: string[];
  try {
    subs = readdirSync(root);
  } catch {
    return out;
  }
  for (const sub of subs) {
    if (!/^[0-9a-f]{2}$/.test(sub)) continue;
    for (const name of readdirSync(join(root, sub))) out.push(join(root, sub, name));
  }
  return out;
}

/** Files under `dir` (recursively), with their lengths. */
export function filesUnder(dir: string): { path: string; size: number }[] {
  const out: { path: string; size: number }[] = [];
  const walk = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(d, n);
      const st = statSync(p, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory()) walk(p);
      else out.push({ path: p, size: st.size });
    }
  };
  walk(dir);
  return out;
}

/** `du -sb DIR` and `du -sB1 DIR` (apparent bytes and bytes in allocated blocks). */
export function du(dir: string): { apparent: number; allocated: number } {
  const a = Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split(/\s/)[0]);
  const b = Number(execFileSync('du', ['-sB1', dir], { encoding: 'utf8' }).split(/\s/)[0]);
  return { apparent: a, allocated: b };
}

/** Sum of the regular files' allocated blocks under `dir` (directories left out). */
export function fileBlocks(dir: string): number {
  let total = 0;
  const walk = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(d, n);
      const st = statSync(p, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory()) walk(p);
      else total += st.blocks * 512;
    }
  };
  walk(dir);
  return total;
}

/** One metric's value (summed over label sets) from the gateway's /metrics. */
export async function metric(port: number, name: string): Promise<number> {
  const r = await get(port, '/metrics');
  let sum = 0;
  let seen = false;
  for (const line of r.body.toString().split('\n')) {
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) {
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
      seen = true;
    }
  }
  if (!seen) throw new Error(`no ${name} in /metrics`);
  return sum;
}

/** VmRSS of `pid` in bytes. */
export function rss(pid: number): number {
  const status = execFileSync('cat', [`/proc/${pid}/status`], { encoding: 'utf8' });
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

/** The worker processes (children) of a gateway's primary. */
export function workers(primary: number): number[] {
  const out = execFileSync('pgrep', ['-P', String(primary)], { encoding: 'utf8' }).trim();
  return out === '' ? [] : out.split('\n').map(Number);
}
