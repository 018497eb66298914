// An HTTP/1.0 client (curl --http1.0, wget 1.x, older Frontier clients) gets a body of unknown
// length delimited by the connection's close. When the upstream body breaks mid-way (a chunked
// body that ends without its last chunk), the gateway must make that visible: for such a client
// the only signal is an aborted connection (RST), not an orderly close, which reads as a complete
// body. HTTP/1.1 clients are told (the chunked reply is left unterminated); HTTP/1.0 clients get
// the truncated body as a clean end.

import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp.ts';
import { rawOrigin, rawRequest, startGateway } from './gateway-lib.ts';

describe('HTTP/1.0 client, upstream chunked body cut mid-way', () => {
  it.each(['store', 'nostore'])('%s: the client sees an aborted connection, not a clean close', async (kind) => {
    const origin = await rawOrigin((s, head) => {
      const cc = head.includes('nostore') ? 'no-store' : 'max-age=600';
      s.write(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nCache-Control: ${cc}\r\n\r\n`);
      const c = Buffer.alloc(50_000, 'z');
      s.write(`${c.length.toString(16)}\r\n`);
      s.write(c);
      s.write('\r\n');
      setTimeout(() => s.end(), 400); // FIN without the terminating 0-chunk
    });
    const gw = await startGateway(['--allow-dest', '@loopback', '--cache-dir', await tempDir('atk-gw-')]);
    const r = await rawRequest(gw.port, `GET http://127.0.0.1:${origin}/${kind} HTTP/1.0\r\n\r\n`);
    expect(r.status).toBe(200);
    expect(r.head).not.toMatch(/content-length/i);
    expect(r.body.length).toBe(50_000);
    expect(r.error, 'the truncated body ended with an orderly close').toBe('ECONNRESET');
  });
});
