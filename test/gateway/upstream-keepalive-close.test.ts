// undici 8.12.4 loses the buffered tail of a kept-alive body when the server closes right after
// it while the reader is slow (docs/DEPENDENCIES.md). The gateway's connector drains the paused
// parser on that close (gateway/upstream-reset.ts): the whole body arrives, and a body whose
// bytes did not all arrive still fails. Raw node:net origins, so the framing is the test's own.

import net from 'node:net';
import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { resetAware, resetAwareConnector } from '../../gateway/upstream-reset.ts';
import { onTeardown } from '../helpers/cleanup.ts';

const N = 131_071;
const body = Buffer.alloc(N, 7);

async function origin(head: string, payload: Buffer): Promise<number> {
  const srv = net.createServer((s) => {
    s.on('error', () => {});
    s.once('data', () => {
      s.write(head);
      s.end(payload);
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  onTeardown(() => new Promise<void>((r) => srv.close(() => r())));
  return (srv.address() as net.AddressInfo).port;
}

/** Reads the body slowly, so undici's parser is paused by backpressure when the server closes. */
async function slowRead(port: number): Promise<{ bytes: number; error?: string }> {
  const agent = new Agent({ connect: resetAwareConnector(5000) });
  onTeardown(() => agent.close());
  const res = await agent.compose(resetAware).request({ origin: `http://127.0.0.1:${port}`, path: '/', method: 'GET' });
  let bytes = 0;
  try {
    for await (const chunk of res.body) {
      bytes += (chunk as Buffer).length;
      await new Promise((r) => setTimeout(r, 5));
    }
  } catch (err) {
    return { bytes, error: (err as { code?: string }).code ?? String(err) };
  }
  return { bytes };
}

describe('a kept-alive body followed at once by the server closing', () => {
  it('arrives whole with a slow reader, each of several times', async () => {
    const port = await origin(`HTTP/1.1 200 OK\r\nContent-Length: ${N}\r\n\r\n`, body);
    for (let i = 0; i < 4; i++) expect(await slowRead(port)).toEqual({ bytes: N });
  });

  it('still fails when bytes of its Content-Length never came', async () => {
    const port = await origin(`HTTP/1.1 200 OK\r\nContent-Length: ${N}\r\n\r\n`, body.subarray(0, N - 10));
    const r = await slowRead(port);
    expect(r.error).toBeDefined();
    expect(r.bytes).toBeLessThan(N);
  });

  it('still fails when a chunked body lacks its last chunk', async () => {
    const chunk = Buffer.concat([Buffer.from(`${N.toString(16)}\r\n`), body, Buffer.from('\r\n')]);
    const port = await origin('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n', chunk);
    const r = await slowRead(port);
    expect(r.error).toBeDefined();
  });
});
