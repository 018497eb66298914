// Shared pieces for the gateway attack files: a gateway process on a free port, raw origins and
// raw clients over node:net, so every byte on the wire is the test's own.

import { execFileSync } from 'node:child_process';
import net from 'node:net';
import { join } from 'node:path';
import { NODE, startChild, type Child } from '../../helpers/process.ts';
import { onTeardown } from '../../helpers/cleanup.ts';

const ESTUARY = join(import.meta.dirname, '..', '..', '..', 'bin', 'estuary.js');

export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

export interface Gateway {
  child: Child;
  port: number;
}

export async function startGateway(args: string[], port?: number): Promise<Gateway> {
  const p = port ?? (await freePort());
  const child = startChild(NODE, [ESTUARY, 'gateway', '--listen', `127.0.0.1:${p}`, '--log-format', 'json', ...args]);
  await child.waitFor(/gateway listening/, 30_000);
  return { child, port: p };
}

/** A raw origin: `handle` gets each connection and the first request's head. */
export async function rawOrigin(handle: (s: net.Socket, head: string) => void): Promise<number> {
  const sockets = new Set<net.Socket>();
  const srv = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d.toString('latin1');
      const i = buf.indexOf('\r\n\r\n');
      if (i < 0) return;
      s.off('data', onData);
      handle(s, buf.slice(0, i));
    };
    s.on('data', onData);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  onTeardown(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => srv.close(() => r()));
  });
  return (srv.address() as net.AddressInfo).port;
}

export interface RawReply {
  head: string;
  status: number;
  body: Buffer;
  /** the connection ended with an error (reset) rather than a clean close */
  error?: string;
}

/** Sends `request` bytes to the gateway and collects everything until the connection closes. */
export function rawRequest(port: number, request: string | Buffer, timeoutMs = 20_000): Promise<RawReply> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(request));
    let out = Buffer.alloc(0);
    let error: string | undefined;
    s.on('data', (d) => (out = Buffer.concat([out, d])));
    s.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    const timer = setTimeout(() => {
      error = 'timeout';
      s.destroy();
    }, timeoutMs);
    s.on('close', () => {
      clearTimeout(timer);
      const i = out.indexOf('\r\n\r\n');
      const head = i < 0 ? out.toString('latin1') : out.subarray(0, i).toString('latin1');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
      resolve({ head, status, body: i < 0 ? Buffer.alloc(0) : out.subarray(i + 4), error });
    });
  });
}

/** Deterministic bytes, so any misplaced or foreign byte shows. */
export function pattern(n: number, seed = 0): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = (i * 7 + (i >> 8) + seed) & 255;
  return b;
}

/** PIDs of processes holding a TCP connection whose local (or peer) port is `port`. */
export function pidsOnPort(port: number, side: 'local' | 'peer' = 'local'): number[] {
  const out = execFileSync('ss', ['-tnpH'], { encoding: 'utf8' });
  const pids = new Set<number>();
  for (const line of out.split('\n')) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 5) continue;
    if (!cols[side === 'local' ? 3 : 4]!.endsWith(`:${port}`)) continue;
    for (const m of line.matchAll(/pid=(\d+)/g)) pids.add(Number(m[1]));
  }
  return [...pids];
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
