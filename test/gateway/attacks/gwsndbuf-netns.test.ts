// Attack: auto over a real (non-loopback) path: a veth pair into a network namespace of this
// test's own, client inside it at 10.x. A near path (veth, round trip of tens of µs) must get the
// fixed 512 KiB (tb 1048576) and byte-exact bodies; a far one must keep the kernel's autotuning.
// There is no netem here, so "far" is made with a token bucket (tbf) on the namespace's side of
// the veth kept full by a UDP flood from inside the namespace: the handshake's last ACK then waits
// ~150 ms in that queue, which is the round trip the gateway reads at accept.
// The namespace (and with it the veth pair) is deleted in teardown, also when a test fails.

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onTeardown } from '../../helpers/cleanup.ts';
import { NODE, startChild, type Child } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { startOrigin } from '../helpers/origin.ts';
import { NEAR_TB, noise, sendBufferOf, sha } from './gwsndbuf-lib.ts';

const ROOT = new URL('../../../', import.meta.url).pathname;
const TAG = `gwsb${process.pid % 100000}`;
const NS = TAG;
const HOST_IF = `${TAG}h`;
const NS_IF = `${TAG}n`;
const NET = `10.213.${process.pid % 250}`;
const HOST_IP = `${NET}.1`;
const NS_IP = `${NET}.2`;
const BODY = noise(3 * 2 ** 20 + 9, 41);
/** Scratch of this run: files tests of other runs cannot overwrite. */
const DIR = mkdtempSync(join(tmpdir(), 'gwsndbuf-netns-'));
afterAll(() => rmSync(DIR, { recursive: true, force: true }));

const sh = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const nsx = (args: string[]) => sh('ip', ['netns', 'exec', NS, ...args]);

function deleteNetns() {
  try {
    sh('ip', ['netns', 'del', NS]);
  } catch {
    // not there
  }
  try {
    sh('ip', ['link', 'del', HOST_IF]);
  } catch {
    // went with the namespace
  }
}

// A client run inside the namespace: one GET, the body's sha256 and the local port on stdout,
// then it keeps the connection open until killed (so `ss` can read the gateway's end).
const CLIENT = `
import net from 'node:net';
import { createHash } from 'node:crypto';
const [host, port, path] = process.argv.slice(2);
const s = net.connect(Number(port), host, () => s.write('GET ' + path + ' HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'));
let buf = Buffer.alloc(0); const parts = []; let total = 0; let need = -1; let headEnd = -1;
s.on('data', (d) => {
  parts.push(d); total += d.length;
  if (need < 0) {
    buf = Buffer.concat(parts); parts.length = 0; parts.push(buf);
    headEnd = buf.indexOf('\\r\\n\\r\\n');
    if (headEnd < 0) return;
    const head = buf.subarray(0, headEnd).toString('latin1');
    need = headEnd + 4 + Number(/content-length: *(\\d+)/i.exec(head)[1]);
    console.log('HEAD ' + JSON.stringify(head.split('\\r\\n')[0]) + ' ' + s.localPort);
  }
  if (total >= need) {
    const all = Buffer.concat(parts);
    console.log('DONE ' + all.length + ' ' + createHash('sha256').update(all.subarray(headEnd + 4, need)).digest('hex') + ' ' + s.localPort);
  }
});
s.on('error', (e) => console.log('ERROR ' + e.message));
`;

// UDP at ~5 Mbit/s toward a closed port on the host: keeps the namespace's tbf queue full.
const FLOOD = `
import dgram from 'node:dgram';
const s = dgram.createSocket('udp4');
const b = Buffer.alloc(1200);
setInterval(() => { for (let i = 0; i < 5; i++) s.send(b, 9, process.argv[2]); }, 10);
`;

let gw: Child;
let gwPort: number;

async function startGw(sendBuffer: string) {
  const child = startChild(
    NODE,
    ['bin/estuary.js', 'gateway', '--listen', `${HOST_IP}:0`, '--log-format', 'json', '--cache-dir', await tempDir('estuary-gw-'), '--upstream', `o=${origin}`, '--send-buffer', sendBuffer],
    { cwd: ROOT },
  );
  const m = await child.waitFor(/"listen":"[^"]*:(\d+)"/, 20_000);
  return { child, port: Number(m[1]) };
}

let origin: string;

async function clientGet(port: number, path: string) {
  const c = startChild('ip', ['netns', 'exec', NS, NODE, `${DIR}/client.mjs`, HOST_IP, String(port), path]);
  onTeardown(() => c.stop('SIGKILL', 100).then(() => undefined));
  return c;
}

beforeAll(async () => {
  mkdirSync(DIR, { recursive: true });
  writeFileSync(`${DIR}/client.mjs`, CLIENT);
  writeFileSync(`${DIR}/flood.mjs`, FLOOD);
  deleteNetns();
  onTeardown(deleteNetns);
  sh('ip', ['netns', 'add', NS]);
  sh('ip', ['link', 'add', HOST_IF, 'type', 'veth', 'peer', 'name', NS_IF]);
  sh('ip', ['link', 'set', NS_IF, 'netns', NS]);
  sh('ip', ['addr', 'add', `${HOST_IP}/30`, 'dev', HOST_IF]);
  sh('ip', ['link', 'set', HOST_IF, 'up']);
  nsx(['ip', 'addr', 'add', `${NS_IP}/30`, 'dev', NS_IF]);
  nsx(['ip', 'link', 'set', NS_IF, 'up']);
  nsx(['ip', 'link', 'set', 'lo', 'up']);
  const o = await startOrigin();
  o.route('/big', (_req, res) => {
    res.writeHead(200, { 'cache-control': 'max-age=3600', 'content-length': BODY.length });
    res.end(BODY);
  });
  o.route('/small', (_req, res) => {
    res.writeHead(200, { 'cache-control': 'max-age=3600', 'content-length': 5 });
    res.end('hello');
  });
  origin = o.url;
});

afterAll(() => deleteNetns());

/** The gateway's rtt estimate (ms) of its connection to the client's port, from `ss -ti`. */
function rttMs(port: number, clientPort: number): number {
  const out = sh('ss', ['-tinH', 'state', 'established', `( sport = :${port} and dport = :${clientPort} )`]);
  const m = / rtt:([\d.]+)\//.exec(out);
  return m ? Number(m[1]) : NaN;
}

describe('auto over a veth pair into a namespace', () => {
  it('near (veth, no queue): tb 1048576, body byte-exact', async () => {
    ({ child: gw, port: gwPort } = await startGw('auto'));
    try {
      const c = await clientGet(gwPort, '/big');
      const m = await c.waitFor(/DONE (\d+) (\w+) (\d+)/, 20_000);
      expect(m[2]).toBe(sha(BODY));
      const port = Number(m[3]);
      expect(rttMs(gwPort, port)).toBeLessThan(1);
      expect(sendBufferOf(gwPort, port)).toBe(NEAR_TB);
    } finally {
      await gw.stop();
    }
  }, 30_000);

  it('near (veth), 64KiB: tb 131072, body byte-exact', async () => {
    ({ child: gw, port: gwPort } = await startGw('64KiB'));
    try {
      const c = await clientGet(gwPort, '/big');
      const m = await c.waitFor(/DONE (\d+) (\w+) (\d+)/, 25_000);
      expect(m[2]).toBe(sha(BODY));
      expect(sendBufferOf(gwPort, Number(m[3]))).toBe(131072);
    } finally {
      await gw.stop();
    }
  }, 30_000);

  /**
   * A client made far without netem: its handshake ACK queued behind a full token bucket
   * (`latency`) that a UDP flood keeps full. Answers the gateway's view: round trip and buffer.
   */
  async function farClient(latency: string, settleMs: number): Promise<{ rtt: number; tb: number }> {
    ({ child: gw, port: gwPort } = await startGw('auto'));
    nsx(['tc', 'qdisc', 'add', 'dev', NS_IF, 'root', 'tbf', 'rate', '2mbit', 'burst', '4kb', 'latency', latency]);
    const flood = startChild('ip', ['netns', 'exec', NS, NODE, `${DIR}/flood.mjs`, HOST_IP]);
    onTeardown(() => flood.stop('SIGKILL', 100).then(() => undefined));
    try {
      await new Promise((r) => setTimeout(r, settleMs));
      const c = await clientGet(gwPort, '/small');
      const m = await c.waitFor(/DONE (\d+) (\w+) (\d+)/, 20_000);
      const port = Number(m[3]);
      return { rtt: rttMs(gwPort, port), tb: sendBufferOf(gwPort, port) };
    } finally {
      await flood.stop('SIGKILL', 100);
      nsx(['tc', 'qdisc', 'del', 'dev', NS_IF, 'root']);
      await gw.stop();
    }
  }

  it('far (handshake ACK queued ~150 ms behind a full tbf): the kernel keeps autotuning', async () => {
    const { rtt, tb } = await farClient('150ms', 500);
    expect(rtt).toBeGreaterThan(20); // the setup made it far
    expect(tb).not.toBe(NEAR_TB);
  }, 30_000);

  // A far client whose handshake ACK comes later than the gateway's first SYN-ACK timeout (1 s)
  // gets a retransmitted SYN-ACK; the kernel then takes no round-trip sample from the handshake,
  // and without TCP timestamps (Windows clients do not send them by default) none at all, so
  // tcpi_rtt reads 0 at accept. 0 is not "under 1 ms": the round trip is unknown, and auto
  // promises the kernel's autotuning to every connection not known to be near.
  it('far, slow handshake (SYN-ACK retransmitted), client without TCP timestamps: not taken for near', async () => {
    nsx(['sysctl', '-qw', 'net.ipv4.tcp_timestamps=0']);
    try {
      const { rtt, tb } = await farClient('1300ms', 1500);
      expect(rtt).toBeGreaterThan(20); // the setup made it far
      expect(tb).not.toBe(NEAR_TB);
    } finally {
      nsx(['sysctl', '-qw', 'net.ipv4.tcp_timestamps=1']);
    }
  }, 30_000);
});
