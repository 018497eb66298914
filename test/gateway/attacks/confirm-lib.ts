// A versioned origin for the write-confirmation attacks: GET answers the object's current body
// (cacheable for an hour, with an ETag), PUT/POST replace it, DELETE removes it. `hold` delays
// GET answers (a fill in flight) and `writes` counts the writes that reached the origin.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTeardown } from '../../helpers/cleanup.ts';

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
