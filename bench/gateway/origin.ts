// The origin every peer caches from: a Node HTTP server on loopback in the bench process. Paths
// end in the object they name (…/small, …/big, …/mix/<name>), so each peer and each run can use
// its own prefix and start cold; the server counts requests per path to prove collapsing.

import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BenchOrigin {
  readonly port: number;
  readonly small: Buffer;
  readonly big: Buffer;
  readonly mix: ReadonlyMap<string, Buffer>;
  count(path: string): number;
  close(): Promise<void>;
}

/** A deterministic, incompressible-looking body, so no layer can shortcut it. */
export function pattern(size: number, seed: number): Buffer {
  const out = Buffer.allocUnsafe(size);
  let block = createHash('sha256').update(String(seed)).digest();
  for (let off = 0; off < size; off += block.length) {
    block.copy(out, off, 0, Math.min(block.length, size - off));
    if ((off & 0xffff) === 0) block = createHash('sha256').update(block).digest();
  }
  return out;
}

/** CVMFS-like objects: manifests (max-age 61), catalogs (~1 MiB), chunks of 4 KiB–8 MiB. */
export function mixObjects(quick: boolean): Map<string, Buffer> {
  const m = new Map<string, Buffer>();
  m.set('.cvmfspublished', pattern(600, 1));
  m.set('.cvmfswhitelist', pattern(1500, 2));
  const catalogs = quick ? 2 : 8;
  for (let i = 0; i < catalogs; i++) m.set(`catalog${i}C`, pattern(2 ** 20, 100 + i));
  const sizes = [4096, 16_384, 65_536, 262_144, 2 ** 20, 4 * 2 ** 20, 8 * 2 ** 20];
  const chunks = quick ? 20 : 120;
  for (let i = 0; i < chunks; i++) m.set(`chunk${i}`, pattern(sizes[i % sizes.length]!, 1000 + i));
  return m;
}

export async function startBenchOrigin(
  smallSize: number,
  bigSize: number,
  quick: boolean,
): Promise<BenchOrigin> {
  const small = pattern(smallSize, 7);
  const big = pattern(bigSize, 8);
  const mix = mixObjects(quick);
  const counts = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const name = path.slice(path.lastIndexOf('/') + 1);
    const body = name === 'small' ? small : name === 'big' ? big : mix.get(name);
    if (!body) {
      res.writeHead(404, { 'content-length': 0 });
      res.end();
      return;
    }
    const maxAge = name.startsWith('.cvmfs') ? 61 : 259_200;
    res.writeHead(200, {
      'content-length': body.length,
      'cache-control': `max-age=${maxAge}`,
      'content-type': 'application/octet-stream',
    });
    res.end(body);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    small,
    big,
    mix,
    count: (path) => counts.get(path) ?? 0,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
