// An https:// address for a server that speaks plain HTTP: OpenSSL's "wrong version number"
// becomes "the endpoint does not speak TLS; use http://…" in every command that takes an address.
// The server is a real plain-HTTP listener on a random loopback port; the errors are the real ones
// Node, undici and the AWS SDK raise.

import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyError } from '../../gateway/upstream.ts';
import { isPlainHttpAnswer, plainHttp } from '../../lib/tls-mismatch.ts';
import { onTeardown, runTeardowns } from '../helpers/cleanup.ts';
import { tempDir } from '../helpers/tmp.ts';

afterAll(runTeardowns);

const BIN = new URL('../../bin/estuary.js', import.meta.url).pathname;

function estuary(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, timeout: 60_000 }, (err, _o, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stderr });
    });
  });
}

describe('an https:// address for a plain-HTTP server', () => {
  let server: Server;
  let https: string;

  beforeAll(async () => {
    server = createServer((_req, res) => res.end('plain'));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    onTeardown(() => new Promise<void>((r) => server.close(() => r())));
    https = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  it("is recognised in fetch's and undici's errors, and not in a refused connection", async () => {
    const fetched = await fetch(https).catch((e: unknown) => e);
    expect(isPlainHttpAnswer(fetched)).toBe(true);
    const agent = new Agent();
    onTeardown(() => agent.close());
    const direct = await request(https, { dispatcher: agent }).catch((e: unknown) => e);
    expect(isPlainHttpAnswer(direct)).toBe(true);
    const refused = await fetch('https://127.0.0.1:9').catch((e: unknown) => e);
    expect(isPlainHttpAnswer(refused)).toBe(false);
    expect(plainHttp(`${https}/x`)).toBe(`${https.replace('https', 'http')}/x`);
  });

  it('the gateway answers a tls_protocol_error that says to use http://', async () => {
    const agent = new Agent();
    onTeardown(() => agent.close());
    const err = await request(https, { dispatcher: agent }).catch((e: unknown) => e);
    const failure = classifyError(err);
    expect(failure.proxyError).toBe('tls_protocol_error');
    expect(failure.message).toBe('the upstream does not speak TLS; use http:// in its URL');
  });

  it('estuary mount --endpoint says so and exits 2', async () => {
    const dir = await tempDir('estuary-tls-mnt-');
    const r = await estuary(['mount', 'data', dir, '--endpoint', https, '--retries', '1'], {
      AWS_ACCESS_KEY_ID: 'k',
      AWS_SECRET_ACCESS_KEY: 'k',
    });
    const plain = plainHttp(https);
    expect(r.stderr).toBe(`estuary: --endpoint ${https}: the endpoint does not speak TLS; use ${plain}\n`);
    expect(r.code).toBe(2);
  });

  it('estuary stage --endpoint says so and exits 2', async () => {
    const dir = await tempDir('estuary-tls-stage-');
    const r = await estuary(['stage', 'in', 's3://data/run42/', dir, '--endpoint', https, '--timeout', '5s'], {
      AWS_ACCESS_KEY_ID: 'k',
      AWS_SECRET_ACCESS_KEY: 'k',
    });
    expect(r.stderr.trim().split('\n').at(-1)).toBe(
      `estuary: --endpoint ${https}: the endpoint does not speak TLS; use ${plainHttp(https)}`,
    );
    expect(r.code).toBe(2);
  });

  it('estuary agent --cache-url says so and exits 2', async () => {
    const r = await estuary([
      'agent',
      '--cache-url',
      https,
      '--amqp',
      'amqp://127.0.0.1:9',
      '--hmac-key',
      'a-long-enough-secret',
      '--site',
      'X',
    ]);
    expect(r.stderr).toBe(
      `estuary: --cache-url ${https}: the endpoint does not speak TLS; use ${plainHttp(https)}\n`,
    );
    expect(r.code).toBe(2);
  });

  it('estuary discover --server names it as the reason no server answered', async () => {
    const r = await estuary(['discover', '--server', https, '--log-format', 'json']);
    expect(r.stderr.split('\n').find((l) => l.startsWith('estuary:'))).toBe(
      `estuary: no discovery server answered (${https}: the endpoint does not speak TLS; ` +
        `use ${plainHttp(https)}) and no --fallback proxies are configured; nothing was changed`,
    );
    expect(r.code).toBe(1);
  });
});
