// A bug of ours must not stop the service. A real `estuary gateway` (one worker, the default) is
// made to crash on a chosen URL through the test-only hook ESTUARY_TEST_CRASH_ON: the crashing
// client gets a closed connection, the primary starts a new worker at once, a retry is answered,
// what was cached before is still a hit, /metrics counts the restart and the log names the
// request once. Crashing again and again ends the service with ESTUARY_GW_CRASH_LOOP, exit 2.
// With two workers, a client of the worker that did not crash streams on, unaware.

import { once } from 'node:events';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { onTeardown } from '../helpers/cleanup.ts';
import { type Reply, send } from './helpers/client.ts';
import { type GatewayChild, startGatewayProcess } from './helpers/gateway.ts';
import { fixed, slow, startOrigin } from './helpers/origin.ts';

const CRASH_ON = '/crash-here';

/** Sends until the gateway answers (a restart refuses connections for about a second). */
async function retried(gateway: string, target: string, withinMs = 20_000): Promise<Reply> {
  const until = Date.now() + withinMs;
  for (;;) {
    try {
      const r = await send(gateway, target);
      if (r.complete) return r;
    } catch (err) {
      if (Date.now() > until) throw err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function countMatches(text: string, pattern: RegExp): number {
  return [...text.matchAll(pattern)].length;
}

describe('one worker under the supervisor', async () => {
  const origin = await startOrigin();
  const gw = await startGatewayProcess(['--allow-dest', '127.0.0.1'], { ESTUARY_TEST_CRASH_ON: CRASH_ON });
  const kept = Buffer.alloc(300_000, 7);
  origin.route('/kept', fixed(kept, { 'cache-control': 'max-age=600' }));
  // Slow, so the hook fires while the request is still being served.
  origin.route(CRASH_ON, slow(Buffer.alloc(64 * 1024, 1), 1024, 20));

  it('restarts a crashed worker: the crashing client is cut, a retry and the cache are served', async () => {
    const first = await send(gw.url, `${origin.url}/kept`);
    expect(first.body.equals(kept)).toBe(true);

    const crashed = await send(gw.url, `${origin.url}${CRASH_ON}?n=1`).catch(() => undefined);
    expect(crashed?.complete ?? false).toBe(false);
    await gw.child.waitFor(/starting a new one/, 10_000);

    // No retry needed: the primary holds the socket, and the connection waits for the new worker.
    const after = await send(gw.url, `${origin.url}/kept`);
    expect(after.body.equals(kept)).toBe(true);
    expect(String(after.headers['cache-status'])).toMatch(/hit.*detail=disk/);
    expect(origin.count('/kept')).toBe(1);

    const metrics = (await retried(gw.url, '/metrics')).body.toString();
    expect(metrics).toMatch(/^estuary_gateway_worker_restarts_total 1$/m);
    // Logged once, with the request that was being served.
    const out = gw.child.output();
    expect(countMatches(out, /gateway worker crashed/g)).toBe(1);
    expect(out).toMatch(new RegExp(`"request":"GET ${origin.url}${CRASH_ON}\\?n=1"`));
  });

  it('gives up after a crash loop with ESTUARY_GW_CRASH_LOOP and exit status 2', async () => {
    for (let n = 2; n < 12 && gw.child.proc.exitCode === null; n++) {
      await retried(gw.url, `${origin.url}${CRASH_ON}?n=${n}`, 5000).catch(() => undefined);
      await gw.child.waitFor(new RegExp(`${CRASH_ON.replace('/', '\\/')}\\?n=${n}`), 10_000).catch(() => undefined);
    }
    expect(await gw.child.exited).toBe(2);
    expect(gw.child.output()).toMatch(/estuary: gateway workers died 5 times within 60 s; stopped restarting them/);
  });
});

/** The worker process (a child of `primary`) holding the TCP connection from local port `clientPort`. */
async function workerOf(primary: number, gatewayPort: number, clientPort: number): Promise<number | undefined> {
  const hex = (n: number) => n.toString(16).toUpperCase().padStart(4, '0');
  const table = await readFile('/proc/net/tcp', 'utf8');
  const row = table
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .find((f) => f[1]?.endsWith(`:${hex(gatewayPort)}`) && f[2]?.endsWith(`:${hex(clientPort)}`));
  if (!row) return undefined;
  const inode = `socket:[${row[9]}]`;
  for (const pid of await childrenOf(primary)) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => []);
    for (const fd of fds) {
      if ((await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')) === inode) return Number(pid);
    }
  }
  return undefined;
}

async function childrenOf(pid: number): Promise<string[]> {
  const out: string[] = [];
  for (const d of await readdir('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const stat = await readFile(`/proc/${d}/stat`, 'utf8').catch(() => '');
    if (stat.split(') ')[1]?.split(' ')[1] === String(pid)) out.push(d);
  }
  return out;
}

/** A connection to the gateway, once a worker has accepted it, and which worker that is. */
async function connectionTo(gw: GatewayChild): Promise<{ socket: Socket; worker: number }> {
  const port = Number(new URL(gw.url).port);
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  onTeardown(() => {
    socket.destroy();
  });
  await once(socket, 'connect');
  for (let i = 0; i < 100; i++) {
    const worker = await workerOf(gw.child.pid, port, socket.localPort!);
    if (worker) return { socket, worker };
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('no worker took the connection');
}

describe('two workers: a crash in one', async () => {
  const origin = await startOrigin();
  const gw = await startGatewayProcess(['--workers', '2', '--allow-dest', '127.0.0.1'], { ESTUARY_TEST_CRASH_ON: CRASH_ON });
  const big = Buffer.alloc(4 * 2 ** 20);
  for (let i = 0; i < big.length; i += 4) big.writeUInt32BE((i * 2654435761) >>> 0, i);
  // About two seconds of body: the crash happens while it streams.
  origin.route('/long', slow(big, 128 * 1024, 60, { 'cache-control': 'max-age=600' }));
  origin.route(CRASH_ON, slow(Buffer.alloc(64 * 1024, 1), 1024, 20));

  it('is not noticed by the clients of the other worker', async () => {
    const long = await connectionTo(gw);
    const bytes: Buffer[] = [];
    long.socket.on('data', (c: Buffer) => bytes.push(c));
    const ended = once(long.socket, 'end');
    long.socket.write(`GET ${origin.url}/long HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    // A connection to the other worker carries the crashing request.
    let other = await connectionTo(gw);
    while (other.worker === long.worker) other = await connectionTo(gw);
    other.socket.write(`GET ${origin.url}${CRASH_ON} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    await once(other.socket, 'close');
    await gw.child.waitFor(/starting a new one/, 10_000);
    await ended;
    const reply = Buffer.concat(bytes);
    const body = reply.subarray(reply.indexOf('\r\n\r\n') + 4);
    expect(reply.subarray(0, 12).toString()).toBe('HTTP/1.1 200');
    expect(body.equals(big)).toBe(true);
    const metrics = (await retried(gw.url, '/metrics')).body.toString();
    expect(metrics).toMatch(/^estuary_gateway_worker_restarts_total 1$/m);
  });
});
