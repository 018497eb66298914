// Shared pieces for the multi-worker attack files: a `--workers N` gateway process in reverse mode,
// its worker PIDs, which worker holds a given client connection, and keep-alive HTTP/1.1 clients
// over node:net so every request's connection (and so its worker) is the test's choice.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTeardown } from '../../helpers/cleanup.ts';
import { type Gateway, sleep, startGateway } from './gateway-lib.ts';

export function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'atk-gw2-'));
  onTeardown(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

/** A reverse-mode gateway with `workers` workers in front of `origin`, on a fresh cache dir. */
export async function clusterGateway(origin: string, workers: number, extra: string[] = [], cacheDir = tempDir()): Promise<Gateway & { cacheDir: string }> {
  const gw = await startGateway(['--workers', String(workers), '--upstream', `default=${origin}`, '--cache-dir', cacheDir, ...extra]);
  onTeardown(() => gw.child.stop('SIGTERM', 5000).then(() => undefined));
  await waitWorkers(gw.child.pid, workers);
  return { ...gw, cacheDir };
}

/** The PIDs of the primary's worker processes (its children). */
export function workerPids(primary: number): number[] {
  try {
    return readFileSync(`/proc/${primary}/task/${primary}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

export async function waitWorkers(primary: number, n: number, notIn: number[] = [], timeoutMs = 20_000): Promise<number[]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const pids = workerPids(primary).filter((p) => !notIn.includes(p));
    if (pids.length >= n) return pids;
    if (Date.now() > until) throw new Error(`only ${pids.length} of ${n} workers came up`);
    await sleep(50);
  }
}

/** The gateway process holding the server side of the client socket `s`. */
export function ownerOf(s: net.Socket, candidates: number[]): number | undefined {
  const out = execFileSync('ss', ['-tnpH'], { encoding: 'utf8' });
  for (const line of out.split('\n')) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 5 || cols[0] !== 'ESTAB' || !cols[4]!.endsWith(`:${s.localPort}`)) continue;
    for (const m of line.matchAll(/pid=(\d+)/g)) if (candidates.includes(Number(m[1]))) return Number(m[1]);
  }
  return undefined;
}

export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * One keep-alive HTTP/1.1 connection. Requests go one at a time; bodies are framed by
 * Content-Length or chunked (enough for the gateway's own answers and for relayed ones).
 */
export class Conn {
  readonly socket: net.Socket;
  #buf = Buffer.alloc(0);
  #wake?: () => void;
  #closed = false;

  private constructor(s: net.Socket) {
    this.socket = s;
    s.on('data', (d: Buffer) => {
      this.#buf = Buffer.concat([this.#buf, d]);
      this.#wake?.();
    });
    s.on('close', () => {
      this.#closed = true;
      this.#wake?.();
    });
    s.on('error', () => undefined);
  }

  static open(port: number): Promise<Conn> {
    return new Promise((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => resolve(new Conn(s)));
      s.once('error', reject);
      onTeardown(() => void s.destroy());
    });
  }

  async #more(deadline: number): Promise<void> {
    if (this.#closed) throw new Error('connection closed');
    const left = deadline - Date.now();
    if (left <= 0) throw new Error('timed out waiting for the answer');
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, left);
      this.#wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }

  async request(method: string, path: string, headers: Record<string, string> = {}, body?: Buffer | string, timeoutMs = 15_000): Promise<Answer> {
    const b = body === undefined ? undefined : Buffer.from(body);
    const lines = [`${method} ${path} HTTP/1.1`, 'Host: gw.test'];
    for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
    if (b) lines.push(`Content-Length: ${b.length}`);
    this.socket.write(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), b ?? Buffer.alloc(0)]));
    const deadline = Date.now() + timeoutMs;
    let end: number;
    while ((end = this.#buf.indexOf('\r\n\r\n')) < 0) await this.#more(deadline);
    const head = this.#buf.subarray(0, end).toString('latin1').split('\r\n');
    const status = Number(head[0]!.split(' ')[1]);
    const hs: Record<string, string> = {};
    for (const l of head.slice(1)) {
      const i = l.indexOf(':');
      hs[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
    }
    this.#buf = this.#buf.subarray(end + 4);
    const noBody = method === 'HEAD' || status === 304 || status === 204 || (status >= 100 && status < 200);
    if (noBody) return { status, headers: hs, body: Buffer.alloc(0) };
    if (hs['transfer-encoding']?.toLowerCase() === 'chunked') {
      const parts: Buffer[] = [];
      for (;;) {
        let nl: number;
        while ((nl = this.#buf.indexOf('\r\n')) < 0) await this.#more(deadline);
        const size = Number.parseInt(this.#buf.subarray(0, nl).toString('latin1'), 16);
        while (this.#buf.length < nl + 2 + size + 2) await this.#more(deadline);
        parts.push(this.#buf.subarray(nl + 2, nl + 2 + size));
        this.#buf = this.#buf.subarray(nl + 2 + size + 2);
        if (size === 0) break;
      }
      return { status, headers: hs, body: Buffer.concat(parts) };
    }
    const len = Number(hs['content-length'] ?? 0);
    while (this.#buf.length < len) await this.#more(deadline);
    const out = Buffer.from(this.#buf.subarray(0, len));
    this.#buf = this.#buf.subarray(len);
    return { status, headers: hs, body: out };
  }

  close(): void {
    this.socket.destroy();
  }
}

/** Opens connections until one lands on each of the given workers; returns them by PID. */
export async function connsOnWorkers(port: number, workers: number[]): Promise<Map<number, Conn>> {
  const got = new Map<number, Conn>();
  // A worker still starting gets no connections yet: keep trying for a while.
  const until = Date.now() + 20_000;
  for (let i = 0; got.size < workers.length && (i < 40 || Date.now() < until); i++) {
    if (i >= 40) await sleep(50);
    const c = await Conn.open(port);
    // The owner is known once the worker confirmed the hand-over and answered something.
    await c.request('GET', '/healthz');
    const pid = ownerOf(c.socket, workers);
    if (pid !== undefined && !got.has(pid)) got.set(pid, c);
    else c.close();
  }
  if (got.size < workers.length) throw new Error(`could not reach every worker (${got.size}/${workers.length})`);
  return got;
}
