// A proxy's refusal in its own words: the reason discovery shows for a cache that fails its check,
// and the agent logs for a failed self-test. Against a real estuary gateway (Proxy-Status) and a
// plain server answering 403 with an HTML page, each on a random loopback port.

import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { proxyFetch, refusalReason } from '../../lib/proxy-fetch.ts';
import { onTeardown, runTeardowns } from '../helpers/cleanup.ts';
import { NODE, startChild } from '../helpers/process.ts';
import { tempDir } from '../helpers/tmp.ts';

afterAll(runTeardowns);

const BIN = new URL('../../bin/estuary.js', import.meta.url).pathname;

async function freePort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

describe('why a proxy refused', () => {
  it("reads an estuary gateway's Proxy-Status", async () => {
    const port = await freePort();
    const dir = await tempDir('estuary-pf-');
    const gw = startChild(NODE, [BIN, 'gateway', '--listen', `127.0.0.1:${port}`, '--cache-dir', dir, '--log-format', 'json']);
    await gw.waitFor(/gateway listening/, 30_000);
    const r = await proxyFetch(`http://127.0.0.1:${port}`, 'http://example.org/x', { timeoutMs: 5000 });
    expect(r.ok).toBe(false);
    expect(r.error).toBe(
      'HTTP 403 (destination_ip_prohibited: destination example.org is not in the allow-list (--allow-dest))',
    );
  });

  it('reads the text of an HTML refusal, tags and head left out', async () => {
    const server = createServer((_req, res) => {
      res.statusCode = 403;
      res.end('<html><head><title>403</title><style>p{}</style></head><body><h1>Forbidden</h1>\n<p>clients of 10.0.0.0/8 only</p></body></html>');
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    onTeardown(() => new Promise<void>((r) => server.close(() => r())));
    const proxy = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const r = await proxyFetch(proxy, 'http://example.org/x', { timeoutMs: 5000 });
    expect(r.error).toBe('HTTP 403: Forbidden clients of 10.0.0.0/8 only');
  });

  it("keeps Squid's access-denied page recognisable, with its words", () => {
    expect(refusalReason(403, undefined, Buffer.from('<html><body>ERR_ACCESS_DENIED</body></html>'))).toBe(
      'HTTP 403: ERR_ACCESS_DENIED',
    );
    expect(refusalReason(502, undefined, Buffer.alloc(0))).toBe('HTTP 502');
    expect(refusalReason(403, 'squid; error=http_request_denied', Buffer.alloc(0))).toBe('HTTP 403 (http_request_denied)');
  });
});
