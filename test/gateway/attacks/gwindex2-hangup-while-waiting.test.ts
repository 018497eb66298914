// Attack: right after a worker crash, 1,500 clients ask the replacement for objects it does not
// hold while it reads its index, and hang up before the 1 s wait is over (a client's own timeout,
// a CVMFS client failing over to the next proxy). Nobody is left to answer.
//
// Expected: a request whose client is gone before it went upstream is not sent upstream (nginx's
// default, proxy_ignore_client_abort off; Squid does not start a fetch for a client that left);
// otherwise every worker crash turns into a burst of fetches for nobody at the origin (docs/CACHING.md,
// "A replacement takes connections": the wait is there so the restart costs the origin nothing).
// And no socket is held for them afterwards.

import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { pidsOnPort, sleep, startGateway } from './gateway-lib.ts';
import { killWorker, pathOrigin, seedCache } from './gwindex2-lib.ts';

afterAll(runTeardowns);

const N = 20_000;
const CLIENTS = 1500;

describe('clients that hang up while the replacement waits for its index', () => {
  it('are not fetched upstream, and hold no socket', async () => {
    const dir = await tempDir('gwi2-hang-');
    const o = await pathOrigin();
    await seedCache(dir, o, N);
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${o.port}`, '--cache-dir', dir]);
    await killWorker(gw);
    const sockets: net.Socket[] = [];
    for (let i = 0; i < CLIENTS; i++) {
      const s = net.connect(gw.port, '127.0.0.1');
      s.on('error', () => {});
      s.write(`GET /gone/${i} HTTP/1.1\r\nHost: o\r\n\r\n`);
      sockets.push(s);
    }
    await sleep(300);
    for (const s of sockets) s.destroy();
    await sleep(4000);
    const fetched = [...o.hits.keys()].filter((p) => p.startsWith('/gone/')).length;
    // Every request that waited for the read and whose client left meanwhile is dropped. On a
    // loaded machine the replacement reaches some requests only after the 1 s wait is over (it is
    // busy reading), and those go upstream at once, before their client's close is read: up to a
    // quarter of them in the slowest runs seen (382 in a clean-clone CI run). Without the check,
    // every one of the 1,500 is fetched.
    expect(fetched).toBeLessThan(CLIENTS / 2);
    // Nothing left open on the gateway's port for the clients that left.
    expect(pidsOnPort(gw.port).length).toBe(0);
  }, 60_000);
});
