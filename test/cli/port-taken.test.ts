// Every long-running role that cannot bind its port exits 2 at once with its own one-line error,
// whatever else it could still do (discovery with a reachable broker, a gateway whose workers bind
// through their primary). The agent and the mount listen on nothing.

import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { onTeardown } from '../helpers/cleanup.ts';
import { NODE, startChild } from '../helpers/process.ts';
import { AMQP_URL } from '../helpers/rabbitmq.ts';
import { tempDir } from '../helpers/tmp.ts';

const BIN = new URL('../../bin/estuary.js', import.meta.url).pathname;
/** "At once": start-up of Node and the role's modules, on a loaded two-core machine. */
const PROMPTLY_MS = 10_000;

async function occupiedPort(): Promise<number> {
  const server: Server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  onTeardown(() => new Promise<void>((r) => server.close(() => r())));
  return (server.address() as { port: number }).port;
}

/** Runs `estuary ...args`; resolves with the exit status and output, or fails when it keeps running. */
async function run(args: readonly string[]): Promise<{ code: number | null; out: string; ms: number }> {
  const started = Date.now();
  const child = startChild(NODE, [BIN, ...args]);
  const late = new Promise<'running'>((r) => setTimeout(() => r('running'), PROMPTLY_MS).unref());
  const code = await Promise.race([child.exited, late]);
  if (code === 'running') throw new Error(`still running after ${PROMPTLY_MS} ms:\n${child.output()}`);
  return { code, out: child.output(), ms: Date.now() - started };
}

describe('a role whose port is taken exits 2 at once', async () => {
  const port = await occupiedPort();
  const where = `127.0.0.1:${port}`;

  it('gateway', async () => {
    const r = await run(['gateway', '--listen', where, '--cache-dir', await tempDir()]);
    expect(r.code).toBe(2);
    expect(r.out).toBe(`estuary: cannot listen on ${where} (EADDRINUSE); choose another address with --listen\n`);
  });

  it('gateway with --workers 2', async () => {
    const r = await run(['gateway', '--listen', where, '--workers', '2', '--cache-dir', await tempDir()]);
    expect(r.code).toBe(2);
    expect(r.out).toBe(`estuary: cannot listen on ${where} (EADDRINUSE); choose another address with --listen\n`);
  });

  it('discovery, with the broker reachable', async () => {
    const r = await run([
      'discovery', '--listen', where, '--amqp', AMQP_URL, '--hmac-key', 'port-taken-test-secret',
      '--geo-db', 'none', '--log-format', 'json',
    ]);
    expect(r.code).toBe(2);
    expect(r.out).not.toContain('consuming heartbeats');
    expect(r.out.trim().split('\n').at(-1)).toBe(
      `estuary: cannot listen on ${where}: EADDRINUSE; pick another --listen address`,
    );
  });

  it('coordinator', async () => {
    const dir = await tempDir();
    const config = join(dir, 'coordinator.yaml');
    writeFileSync(
      config,
      `coordinator:
  listen: ${where}
  state-dir: ${dir}/state
  batch-system: {type: slurm, partitions: [cloud]}
  machine-types:
    small: {cores: 2, memory: 1000MiB}
  sites:
    cloud:
      adapter: command
      quota: 1
      machine-types: [small]
      command: {start: 'true', stop: 'true', status: 'echo running'}
`,
    );
    const r = await run(['coordinator', '--config', config, '--log-format', 'json']);
    expect(r.code).toBe(2);
    expect(r.out.trim().split('\n').at(-1)).toBe(
      `estuary: cannot listen on ${where} (EADDRINUSE); choose another address with --listen`,
    );
  });
});
