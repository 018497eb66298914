// Attack: the buffer on connections the simple test does not reach: auto with --workers 2
// (connections accepted by the primary and handed to a worker, which reads the round trip
// there), off with --workers 2, and connections over IPv6 loopback (::1), with auto and a SIZE.
// Every connection (many, so both workers serve some) must show the promised buffer and a
// byte-exact body.

import { describe, expect, it } from 'vitest';
import { startChild, NODE } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { startOrigin } from '../helpers/origin.ts';
import { get, kernelTb, NEAR_TB, noise, open, readAnswers, sendBufferOf, sha } from './gwsndbuf-lib.ts';

const BODY = noise(3 * 2 ** 20 + 5, 31);
const ROOT = new URL('../../../', import.meta.url).pathname;

async function gateway(listen: string, args: string[]) {
  const origin = await startOrigin();
  origin.route('/big', (_req, res) => {
    res.writeHead(200, { 'cache-control': 'max-age=3600', 'content-length': BODY.length });
    res.end(BODY);
  });
  const child = startChild(
    NODE,
    ['bin/estuary.js', 'gateway', '--listen', listen, '--log-format', 'json', '--cache-dir', await tempDir('estuary-gw-'), '--upstream', `o=${origin.url}`, ...args],
    { cwd: ROOT },
  );
  const m = await child.waitFor(/"listen":"[^"]*:(\d+)"/, 20_000);
  if (args.includes('--workers')) await child.waitFor(/worker[^\n]*(ready|listening)|listening[^\n]*worker/i, 20_000).catch(() => undefined);
  return { child, port: Number(m[1]) };
}

/** `n` connections, one GET /big each (kept open), then the kernel's tb of each and the pids serving. */
async function connections(port: number, host: string, n: number) {
  const out: { tb: number; ok: boolean }[] = [];
  const socks = [];
  for (let i = 0; i < n; i++) {
    const s = await open(port, host);
    s.write(get('/big'));
    const [a] = await readAnswers(s, 1);
    out.push({ tb: sendBufferOf(port, s.localPort!), ok: a!.status === 200 && sha(a!.body) === sha(BODY) });
    socks.push(s);
  }
  for (const s of socks) s.destroy();
  return out;
}

describe('the buffer with workers and over IPv6', () => {
  it('auto, --workers 2: every connection near (loopback) gets 512 KiB (tb 1048576)', async () => {
    const { child, port } = await gateway('127.0.0.1:0', ['--workers', '2', '--send-buffer', 'auto']);
    try {
      const got = await connections(port, '127.0.0.1', 12);
      expect(got).toEqual(got.map(() => ({ tb: NEAR_TB, ok: true })));
    } finally {
      await child.stop();
    }
  }, 30_000);

  it('off, --workers 2: no connection gets a fixed buffer', async () => {
    const { child, port } = await gateway('127.0.0.1:0', ['--workers', '2', '--send-buffer', 'off']);
    try {
      const got = await connections(port, '127.0.0.1', 8);
      for (const g of got) {
        expect(g.ok).toBe(true);
        expect(g.tb).not.toBe(NEAR_TB);
      }
    } finally {
      await child.stop();
    }
  }, 30_000);

  it('IPv6 loopback (::1), auto: tb 1048576', async () => {
    const { child, port } = await gateway('[::1]:0', ['--send-buffer', 'auto']);
    try {
      const got = await connections(port, '::1', 4);
      expect(got).toEqual(got.map(() => ({ tb: NEAR_TB, ok: true })));
    } finally {
      await child.stop();
    }
  }, 30_000);

  it('IPv6 loopback (::1), 96KiB: tb 196608 (wmem_max permitting)', async () => {
    const { child, port } = await gateway('[::1]:0', ['--send-buffer', '96KiB']);
    try {
      const got = await connections(port, '::1', 4);
      expect(got).toEqual(got.map(() => ({ tb: kernelTb(96 * 1024), ok: true })));
    } finally {
      await child.stop();
    }
  }, 30_000);

  it('dual-stack listener ([::]), IPv4 client (v4-mapped), auto: tb 1048576', async () => {
    const { child, port } = await gateway('[::]:0', ['--send-buffer', 'auto', '--allow-client', '127.0.0.0/8,::1/128,::ffff:127.0.0.0/104']);
    try {
      const got = await connections(port, '127.0.0.1', 3);
      expect(got).toEqual(got.map(() => ({ tb: NEAR_TB, ok: true })));
    } finally {
      await child.stop();
    }
  }, 30_000);
});
