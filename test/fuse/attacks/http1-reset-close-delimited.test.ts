// Attack on the mount's HTTP/1.1 client: a body framed by the connection's end (no
// Content-Length, no chunked) that is cut by a TCP reset. A reset is not the end of the body: the
// read must fail with an errno, never hand back the bytes before the reset as the whole object
// (docs/SEMANTICS.md, the data path: exactly the object's bytes or an error, never wrong bytes).
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { DataPath } from '../../../fuse/s3/data-path.ts';
import { SlabPool } from '../../../fuse/s3/slab-pool.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';

afterAll(runTeardowns);

/** A server that answers every request with a close-delimited 200 and resets after `sent` bytes. */
async function resettingServer(sent: number): Promise<number> {
  const server = net.createServer((sock) => {
    sock.once('data', () => {
      sock.write('HTTP/1.1 200 OK\r\nETag: "e"\r\nConnection: close\r\n\r\n');
      sock.write(Buffer.alloc(sent, 0x61), () => setTimeout(() => sock.resetAndDestroy(), 50));
    });
    sock.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTeardown(() => new Promise<void>((r) => server.close(() => r())));
  return (server.address() as net.AddressInfo).port;
}

function dataPath(port: number): DataPath {
  const path = new DataPath({
    bucketUrl: new URL(`http://127.0.0.1:${port}/bucket`),
    region: 'us-east-1',
    credentials: async () => ({ accessKeyId: 'a', secretAccessKey: 's' }),
    maxAttempts: 1,
    idleTimeoutMs: 5000,
    maxSockets: 4,
    slabs: new (SlabPool as unknown as new () => SlabPool)(),
  });
  onTeardown(() => path.close());
  return path;
}

describe('close-delimited body cut by a reset', () => {
  it('a whole-object GET fails instead of returning the bytes before the reset', async () => {
    const port = await resettingServer(1000);
    const path = dataPath(port);
    // Expected: rejects (ECONNRESET / unavailable). Today: resolves with 1000 bytes as the object.
    await expect(path.getBuffer('k')).rejects.toThrow();
  });

  it('a ranged GET answered by a 200 fails instead of ending the file early', async () => {
    const port = await resettingServer(500);
    const path = dataPath(port);
    // Expected: rejects. Today: size becomes 500 and the range 0-4095 "completes" with 500 bytes.
    await expect(path.getBuffer('k', { start: 0, end: 4096 })).rejects.toThrow();
  });
});
