// Several gateways as one cache: with --peers, each object is fetched and stored once, by the
// gateway that owns its key, whichever gateway the client asked.

import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { send } from './helpers/client.ts';
import { startTestGateway } from './helpers/gateway.ts';
import { fixed, startOrigin } from './helpers/origin.ts';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe('peers', async () => {
  const origin = await startOrigin();
  for (let i = 0; i < 20; i++)
    origin.route(`/o/${i}`, fixed(`object ${i}`, { 'cache-control': 'max-age=60' }));
  const [pa, pb] = [await freePort(), await freePort()];
  const peers = [`http://127.0.0.1:${pa}`, `http://127.0.0.1:${pb}`];
  const a = await startTestGateway({ listen: `127.0.0.1:${pa}`, peers, peerSelf: peers[0] });
  const b = await startTestGateway({ listen: `127.0.0.1:${pb}`, peers, peerSelf: peers[1] });

  it('stores each object once across the peers and fetches it upstream once', async () => {
    for (let i = 0; i < 20; i++) {
      for (const gw of [a, b, a]) {
        const r = await send(gw.url, `${origin.url}/o/${i}`);
        expect(r.body.toString()).toBe(`object ${i}`);
      }
      expect(origin.count(`/o/${i}`)).toBe(1);
    }
    expect(a.cache.disk.count + b.cache.disk.count).toBe(20);
    expect(a.cache.disk.count).toBeGreaterThan(2);
    expect(b.cache.disk.count).toBeGreaterThan(2);
  });

  it('falls back to fetching itself when the owning peer is down', async () => {
    await b.stop();
    for (let i = 0; i < 20; i++) {
      expect((await send(a.url, `${origin.url}/o/${i}`)).status).toBe(200);
    }
  });
});
