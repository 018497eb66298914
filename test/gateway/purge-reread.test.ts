// A purge's reread of cache directories the index could not read, while the gateway serves: what
// is invalidated meanwhile (here a write through the gateway) stays invalidated when the reread
// indexes what it found, as during a replacement worker's read of its index (docs/CACHING.md).

import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../helpers/cleanup.ts';
import { adminPost, get, unreadableCache } from './attacks/gwindex2-lib.ts';

afterAll(runTeardowns);

const TOKEN = 'purge-reread-token-0123456789';

function put(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'PUT', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end('new');
  });
}

describe('a purge rereading what the index could not read', () => {
  it('does not bring back an entry written through the gateway meanwhile', async () => {
    const { o, port, giveBack } = await unreadableCache(6000, TOKEN);
    giveBack();

    // The reread of 6000 entries starts; a write of one of them is answered while it runs.
    let rereadOver = false;
    const purge = adminPost(port, TOKEN, 'purge', { prefix: '/nothing/' }).then(() => (rereadOver = true));
    await new Promise((r) => setTimeout(r, 40));
    expect(await put(port, '/o/4321')).toBe(200);
    const writtenDuringReread = !rereadOver;
    await purge;
    o.gen.value = 1;
    const before = o.hits.get('/o/4321') ?? 0;
    expect((await get(port, '/o/4321')).status).toBe(200);
    expect({ writtenDuringReread, fetchedAfterWrite: (o.hits.get('/o/4321') ?? 0) - before }).toEqual({ writtenDuringReread: true, fetchedAfterWrite: 1 });
  }, 50_000);
});
