// `estuary discover` reads at most MAX_ANSWER_BYTES of a server's answer: a worker node's cron job
// must not buffer whatever a server streams. An answer past the cap counts as no answer, so the
// fallbacks apply, even when the oversized answer would parse.

import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_ANSWER_BYTES } from '../../../discovery/client/discover.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';

afterAll(runTeardowns);

const BIN = new URL('../../../bin/estuary.js', import.meta.url).pathname;

describe('discover against a server whose answer is larger than the cap', () => {
  it('stops reading, says so with -v and applies the fallbacks', async () => {
    const pad = 'x'.repeat(MAX_ANSWER_BYTES + 1024);
    const body = JSON.stringify({ 0: { hostname: 'big', squid_port: 3128, public_ip: '10.0.0.9' }, pad });
    const server = createServer((_req, res) => res.end(body));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    onTeardown(() => new Promise<void>((r) => server.close(() => r())));
    const port = (server.address() as AddressInfo).port;
    const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        [BIN, 'discover', '--server', `http://127.0.0.1:${port}`, '--no-test', '--fallback', 'DIRECT', '-v', '--log-format', 'json'],
        { timeout: 20_000 },
        (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe('DIRECT');
    expect(r.stderr).toContain(`answer larger than ${MAX_ANSWER_BYTES} bytes`);
  });
});
