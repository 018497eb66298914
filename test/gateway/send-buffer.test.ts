// --send-buffer (gateway/send-buffer.ts): the socket send buffer of client connections, as the
// kernel reports it (`ss`, skmem tb: SO_SNDBUF doubled), on a gateway in this process and on one
// with two workers, whose connections are handed from the primary.

import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../lib/config/resolve.ts';
import { gatewayOptions } from '../../gateway/options.ts';
import { cappedSendBuffer, NEAR_RTT_US, NEAR_SEND_BUFFER, readWmemMax, sendBufferFor } from '../../gateway/send-buffer.ts';
import { roundTripUs } from '../../lib/socket-options.ts';
import { startGatewayProcess, startTestGateway } from './helpers/gateway.ts';
import { startOrigin } from './helpers/origin.ts';
import { tempDir } from '../helpers/tmp.ts';

const BODY = Buffer.alloc(3 * 2 ** 20, 'z');
/** What the kernel keeps for SO_SNDBUF `bytes` (`ss` tb): doubled, after capping at net.core.wmem_max. */
const kernelTb = (bytes: number): number => 2 * Math.min(bytes, readWmemMax() ?? bytes);

describe('cappedSendBuffer', () => {
  it('names net.core.wmem_max when the kernel gives less than asked, and nothing otherwise', () => {
    expect(cappedSendBuffer(64 * 2 ** 20, 4 * 2 ** 20)).toBe(
      '--send-buffer asks for 64MiB, over net.core.wmem_max (4MiB): connections get 4MiB; raise it with sysctl -w net.core.wmem_max=67108864',
    );
    expect(cappedSendBuffer('auto', 212_992)).toMatch(/^--send-buffer asks for 512KiB, over net.core.wmem_max \(208KiB\): near connections get 208KiB;/);
    expect(cappedSendBuffer('auto', 4 * 2 ** 20)).toBeUndefined();
    expect(cappedSendBuffer('off', 4096)).toBeUndefined();
    expect(cappedSendBuffer(2 ** 20, undefined)).toBeUndefined();
  });
});

describe('sendBufferFor', () => {
  it('auto: a fixed buffer on near connections only; off: never; a size: always', () => {
    expect(sendBufferFor('auto', 40)).toBe(NEAR_SEND_BUFFER);
    expect(sendBufferFor('auto', NEAR_RTT_US - 1)).toBe(NEAR_SEND_BUFFER);
    expect(sendBufferFor('auto', NEAR_RTT_US)).toBeUndefined();
    expect(sendBufferFor('auto', 30_000)).toBeUndefined();
    expect(sendBufferFor('auto', undefined)).toBeUndefined();
    expect(sendBufferFor('auto', 0)).toBeUndefined();
    expect(sendBufferFor('off', 40)).toBeUndefined();
    expect(sendBufferFor(65_536, 30_000)).toBe(65_536);
  });
});

/** The kernel's send buffer of the gateway's end of the connection `client` (bytes). */
function serverSendBuffer(gatewayPort: number, client: Socket): number {
  const out = execFileSync('ss', ['-tmHn', 'state', 'established', `( sport = :${gatewayPort} and dport = :${client.localPort} )`], {
    encoding: 'utf8',
  });
  const m = /tb(\d+)/.exec(out);
  if (!m) throw new Error(`ss found no such connection: ${JSON.stringify(out)}`);
  return Number(m[1]);
}

/** Reads one answer of BODY from a kept-alive connection, which stays open. */
async function getOnce(url: string): Promise<{ socket: Socket; port: number }> {
  const port = Number(new URL(url).port);
  const socket = connect(port, '127.0.0.1');
  await new Promise((r) => socket.once('connect', r));
  socket.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n');
  let got = 0;
  await new Promise<void>((resolve, reject) => {
    socket.on('data', (b: Buffer) => {
      if (got === 0 && !b.toString('latin1', 0, 12).startsWith('HTTP/1.1 200')) reject(new Error(b.toString('latin1', 0, 200)));
      got += b.length;
      if (got >= BODY.length) resolve();
    });
    socket.once('error', reject);
  });
  return { socket, port };
}

async function measure(flags: Record<string, unknown>): Promise<number> {
  const origin = await startOrigin();
  origin.route('/big', (_req, res) => {
    res.writeHead(200, { 'cache-control': 'max-age=3600' });
    res.end(BODY);
  });
  const gw = await startTestGateway({ upstream: [`o=${origin.url}`], ...flags });
  const { socket, port } = await getOnce(gw.url);
  try {
    return serverSendBuffer(port, socket);
  } finally {
    socket.destroy();
  }
}

describe('the send buffer of client connections', () => {
  it('auto, over loopback (a near connection): the near buffer, as the kernel keeps it', async () => {
    expect(await measure({})).toBe(kernelTb(NEAR_SEND_BUFFER));
  });

  it("reads a TCP connection's round trip from the kernel (loopback: near)", async () => {
    const origin = await startOrigin();
    const socket = connect(Number(new URL(origin.url).port), '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    const rtt = roundTripUs(socket);
    socket.destroy();
    expect(rtt).toBeGreaterThan(0);
    expect(rtt).toBeLessThan(NEAR_RTT_US);
  });

  it('a size: that size', async () => {
    expect(await measure({ sendBuffer: 64 * 1024 })).toBe(kernelTb(64 * 1024));
  });

  it("off: the kernel's own, grown by autotuning", async () => {
    const tb = await measure({ sendBuffer: 'off' });
    expect(tb).not.toBe(kernelTb(NEAR_SEND_BUFFER));
    expect(tb).toBeGreaterThan(0);
  });

  it('with two workers, on connections handed from the primary', async () => {
    const origin = await startOrigin();
    origin.route('/big', (_req, res) => {
      res.writeHead(200, { 'cache-control': 'max-age=3600' });
      res.end(BODY);
    });
    const gw = await startGatewayProcess(['--workers', '2', '--upstream', `o=${origin.url}`, '--send-buffer', '96KiB']);
    const { socket, port } = await getOnce(gw.url);
    try {
      expect(serverSendBuffer(port, socket)).toBe(kernelTb(96 * 1024));
    } finally {
      socket.destroy();
      await gw.child.stop();
    }
  }, 30_000);

  it('without the addon: says so at start, and connections keep the kernel\'s buffers', async () => {
    const dir = await tempDir('estuary-sndbuf-');
    const hook = join(dir, 'no-addon.mjs');
    writeFileSync(
      hook,
      `import { registerHooks } from 'node:module';
registerHooks({
  resolve(specifier, context, next) {
    if (specifier.endsWith('socket_options.node')) throw new Error('Cannot find module ' + specifier);
    return next(specifier, context);
  },
});
`,
    );
    const origin = await startOrigin();
    origin.route('/big', (_req, res) => {
      res.writeHead(200, { 'cache-control': 'max-age=3600' });
      res.end(BODY);
    });
    const gw = await startGatewayProcess(['--upstream', `o=${origin.url}`, '--send-buffer', '96KiB'], { NODE_OPTIONS: `--import ${hook}` });
    try {
      await gw.child.waitFor(/--send-buffer has no effect/, 5000);
      const { socket, port } = await getOnce(gw.url);
      expect(serverSendBuffer(port, socket)).not.toBe(kernelTb(96 * 1024));
      socket.destroy();
    } finally {
      await gw.child.stop();
    }
  }, 30_000);

  it('takes auto, off and sizes, and refuses anything else in one line', () => {
    const parse = (v: unknown) => resolveConfig('gateway', gatewayOptions, { flags: { sendBuffer: v }, env: {} }).config.sendBuffer;
    expect(resolveConfig('gateway', gatewayOptions, { flags: {}, env: {} }).config.sendBuffer).toBe('auto');
    expect(parse('off')).toBe('off');
    expect(parse('256KiB')).toBe(256 * 1024);
    expect(parse(' auto\n')).toBe('auto');
    expect(() => parse('32KiB')).toThrow(/expected auto, off, or a size from 64KiB to 64MiB/);
    expect(() => parse('10')).toThrow(/expected auto, off, or a size from 64KiB to 64MiB/);
    expect(() => parse('big')).toThrow(/expected auto, off, or a size from 64KiB to 64MiB/);
  });
});
