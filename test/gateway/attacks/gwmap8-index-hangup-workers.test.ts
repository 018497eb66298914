// Attack: --workers 2, one worker killed (-9) and replaced while its disk index (20,000 entries)
// is read; clients ask for entries on disk that the replacement has not read yet: some hang up
// after 300 ms, the others stay.
//
// docs/CACHING.md ("Limits worth knowing"): a replacement "reads its index from the disk while it
// serves: a request that finds nothing in the index meanwhile waits for the read, up to 1 s ... A
// request whose client hung up during that wait is dropped, not fetched"; entries on disk are
// served "as before the crash" when read within that second, otherwise fetched and stored anew.
// Expected: few of the hung-up requests reach the origin (the same bound as the one-worker
// attack gwindex2-hangup-while-waiting: under a quarter), and every client that stays gets the
// object's exact bytes.

import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { sleep, startGateway } from './gateway-lib.ts';
import { bodyOf, get, killWorker, pathOrigin, seedCache } from './gwindex2-lib.ts';

afterAll(runTeardowns);

const N = 20_000;

describe('a replaced worker reading its index, --workers 2', () => {
  it('drops the requests of clients that left and answers the ones that stay', async () => {
    const dir = await tempDir('gwmap8-index-');
    const o = await pathOrigin();
    const paths = await seedCache(dir, o, N);
    o.hits.clear();
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${o.port}`, '--cache-dir', dir, '--workers', '2']);
    await killWorker(gw);
    // 600 clients for entries on disk that hang up at 300 ms; 100 that stay (the newest entries,
    // which the read reaches last).
    const leaving: net.Socket[] = [];
    const gone = paths.slice(N - 700, N - 100);
    for (const p of gone) {
      const s = net.connect(gw.port, '127.0.0.1');
      s.on('error', () => {});
      s.write(`GET ${p} HTTP/1.1\r\nHost: o\r\n\r\n`);
      leaving.push(s);
    }
    const stay = Promise.all(paths.slice(N - 100).map((p) => get(gw.port, p)));
    await sleep(300);
    for (const s of leaving) s.destroy();
    const stayed = await stay;
    await sleep(3000);
    const wrong = stayed.map((r, i) => ({ r, p: paths[N - 100 + i]! })).filter(({ r, p }) => r.status !== 200 || !Buffer.from(r.body).equals(bodyOf(p)));
    expect(wrong.map(({ r, p }) => `${p}: ${r.status} ${r.body.length}`), 'clients that stayed').toEqual([]);
    const fetchedGone = gone.filter((p) => o.hits.has(p)).length;
    expect(fetchedGone, `hung-up requests fetched (of ${gone.length}); stayers fetched ${paths.slice(N - 100).filter((p) => o.hits.has(p)).length}`).toBeLessThan(gone.length / 4);
  }, 120_000);
});
