// A versioned origin for the write-confirmation attacks: GET answers the object's current body
// (cacheable for an hour, with an ETag), PUT/POST replace it, DELETE removes it. `hold` delays
// GET answers (a fill in flight) and `writes` counts the writes that reached the origin.

import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { EntryMeta } from '../../../gateway/cache/entry.ts';
import { decodeMeta, decodeTail, encodeTrailer, TRAILER_FIXED } from '../../../gateway/cache/format.ts';
import { onTeardown } from '../../helpers/cleanup.ts';
import { clusterGateway, Conn } from './cluster-lib.ts';

export interface VersionedOrigin {
  url: string;
  objects: Map<string, string>;
  writes: number;
  gets: number;
  /** Milliseconds every GET waits before it answers. */
  hold: number;
}

export async function versionedOrigin(): Promise<VersionedOrigin> {
  const o: VersionedOrigin = { url: '', objects: new Map(), writes: 0, gets: 0, hold: 0 };
  const srv = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const path = req.url ?? '/';
      if (req.method === 'PUT' || req.method === 'POST') {
        o.objects.set(path, Buffer.concat(chunks).toString());
        o.writes++;
        res.writeHead(204).end();
        return;
      }
      if (req.method === 'DELETE') {
        o.objects.delete(path);
        o.writes++;
        res.writeHead(204).end();
        return;
      }
      o.gets++;
      // The body is taken now: a GET that started before a write answers the old version.
      const body = o.objects.get(path);
      setTimeout(() => {
        if (body === undefined) {
          res.writeHead(404, { 'cache-control': 'no-store', 'content-length': '0' }).end();
          return;
        }
        const vary = path.includes('vary') ? { vary: 'accept-language' } : undefined;
        res
          .writeHead(200, {
            'cache-control': 'public, max-age=3600',
            etag: `"${Buffer.from(body).toString('hex').slice(0, 32)}"`,
            'content-type': 'text/plain',
            'content-length': String(Buffer.byteLength(body)),
            ...vary,
          })
          .end(req.method === 'HEAD' ? undefined : body);
      }, o.hold);
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  onTeardown(() => {
    srv.closeAllConnections();
    return new Promise<void>((r) => srv.close(() => r()));
  });
  o.url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  return o;
}

async function oneEntry(root: string): Promise<{ meta: EntryMeta; body: Buffer }> {
  for (const sub of await readdir(root)) {
    if (!/^[0-9a-f]{2}$/.test(sub)) continue;
    for (const name of await readdir(join(root, sub))) {
      const file = await readFile(join(root, sub, name));
      const len = decodeTail(file.subarray(file.length - TRAILER_FIXED))!;
      const meta = decodeMeta(file.subarray(file.length - TRAILER_FIXED - len, file.length - TRAILER_FIXED), file.length)!;
      return { meta, body: file.subarray(0, meta.size) };
    }
  }
  throw new Error('no entry stored');
}

/**
 * Fills `cacheDir` with `n` stored objects at `pathOf(i)` (bodies `o<i>`, also set at the origin),
 * in the gateway's own on-disk format: a one-worker gateway stores one object, which is copied.
 * Much faster than fetching many objects through the gateway.
 */
export async function seedEntries(o: VersionedOrigin, cacheDir: string, n: number, pathOf: (i: number) => string): Promise<void> {
  o.objects.set('/seed', 'seed-body');
  const first = await clusterGateway(o.url, 1, [], cacheDir);
  const c = await Conn.open(first.port);
  await c.request('GET', '/seed');
  c.close();
  await first.child.stop('SIGTERM', 5000);
  const root = join(cacheDir, 'v1');
  const seed = await oneEntry(root);
  for (let i = 0; i < n; i++) {
    const path = pathOf(i);
    const body = Buffer.from(`o${i}`);
    o.objects.set(path, `o${i}`);
    const meta: EntryMeta = {
      ...seed.meta,
      key: seed.meta.key.replace('/seed', path),
      url: seed.meta.url.replace('/seed', path),
      size: body.length,
      headers: { ...seed.meta.headers, 'content-length': String(body.length) },
    };
    const name = randomBytes(16).toString('hex');
    await mkdir(join(root, name.slice(0, 2)), { recursive: true });
    await writeFile(join(root, name.slice(0, 2), name), Buffer.concat([body, encodeTrailer(meta)]));
  }
}
