// Attack: an HTTP/1.1 server that frames its answers a little loosely — a stray CRLF after a
// body whose Content-Length it met exactly. RFC 9112 §2.2 asks a recipient to ignore an empty
// line before a start line "in the interest of robustness"; Node's own HTTP client, undici and
// curl read such answers. The answer was complete: the request must succeed.

import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { clientFor } from './lying-s3.ts';

afterAll(runTeardowns);

const PAGE =
  '<?xml version="1.0"?><ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>a</Key><Size>1</Size>' +
  '<ETag>"e"</ETag><LastModified>2020-01-01T00:00:00.000Z</LastModified></Contents></ListBucketResult>';

async function rawServer(tail: string): Promise<string> {
  const srv = net.createServer((s) => {
    s.on('data', () => s.write(`HTTP/1.1 200 OK\r\ncontent-type: application/xml\r\ncontent-length: ${PAGE.length}\r\n\r\n${PAGE}${tail}`));
    s.on('error', () => {});
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const sockets = new Set<net.Socket>();
  srv.on('connection', (s) => sockets.add(s));
  onTeardown(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => srv.close(() => r()));
  });
  return `http://127.0.0.1:${(srv.address() as net.AddressInfo).port}`;
}

describe('loose framing', () => {
  // Expected: both listings succeed. Today each fails with "malformed HTTP answer: 2 bytes after
  // the end of the answer" (EPROTO, not retried): readdir answers EIO on every call.
  it('a stray CRLF after a complete answer does not fail the request', async () => {
    const client = clientFor(await rawServer('\r\n'), { maxAttempts: 2, idleTimeoutMs: 1000 });
    expect((await client.list('')).objects.map((o) => o.key)).toEqual(['a']);
    expect((await client.list('')).objects.map((o) => o.key)).toEqual(['a']);
  });

  // Holds today.
  it('the same answer without the CRLF', async () => {
    const client = clientFor(await rawServer(''), { maxAttempts: 2, idleTimeoutMs: 1000 });
    expect((await client.list('')).objects.map((o) => o.key)).toEqual(['a']);
  });
});
