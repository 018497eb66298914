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

/** What a CVMFS-like object is made of: its size and the seed of its bytes. */
export interface ObjectRecipe {
  readonly size: number;
  readonly seed: number;
}

/** CVMFS-like objects: manifests (max-age 61), catalogs (~1 MiB), chunks of 4 KiB–8 MiB. */
export function mixRecipes(quick: boolean): Map<string, ObjectRecipe> {
  const m = new Map<string, ObjectRecipe>();
  m.set('.cvmfspublished', { size: 600, seed: 1 });
  m.set('.cvmfswhitelist', { size: 1500, seed: 2 });
  const catalogs = quick ? 2 : 8;
  for (let i = 0; i < catalogs; i++) m.set(`catalog${i}C`, { size: 2 ** 20, seed: 100 + i });
  const sizes = [4096, 16_384, 65_536, 262_144, 2 ** 20, 4 * 2 ** 20, 8 * 2 ** 20];
  const chunks = quick ? 20 : 120;
  for (let i = 0; i < chunks; i++) m.set(`chunk${i}`, { size: sizes[i % sizes.length]!, seed: 1000 + i });
  return m;
}

export function mixObjects(quick: boolean): Map<string, Buffer> {
  return new Map([...mixRecipes(quick)].map(([name, r]) => [name, pattern(r.size, r.seed)]));
}

/** The seeds of the small and the big object. */
export const SMALL_SEED = 7;
export const BIG_SEED = 8;

/** The response headers of an object: manifests expire after 61 s, everything else in 3 days. */
export function objectHeaders(name: string, length: number): Record<string, string | number> {
  const maxAge = name.startsWith('.cvmfs') ? 61 : 259_200;
  return {
    'content-length': length,
    'cache-control': `max-age=${maxAge}`,
    'content-type': 'application/octet-stream',
  };
}

export async function startBenchOrigin(
  smallSize: number,
  bigSize: number,
  quick: boolean,
): Promise<BenchOrigin> {
  const small = pattern(smallSize, SMALL_SEED);
  const big = pattern(bigSize, BIG_SEED);
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
    res.writeHead(200, objectHeaders(name, body.length));
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
