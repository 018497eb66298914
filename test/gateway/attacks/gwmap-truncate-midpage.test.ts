// Attack: another program cuts an entry file short by a few bytes while a worker holds its body
// mapped (the cut lands inside the body's last page, so no whole page leaves the page cache).
//
// Expected (docs/CACHING.md, "Disk hits from the page cache": "An entry file cut short by another
// program while mapped: its lost pages leave the page cache, so the next hit finds it not all in
// memory, reads it, finds it short and goes to the origin"; and an answer is never wrong bytes
// presented whole): the next hit gets the origin's bytes (refetched), or at worst a cut answer.
// Today mincore still finds every page resident (the last page stays, its tail zeroed by the
// kernel), the held mapping is used as is, and the client gets a complete 200 with
// Content-Length intact whose last bytes are zeros; the damaged entry is never dropped.

import { truncateSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { entryFiles, get, metric, origin } from './disk-lib.ts';
import { pattern, sleep, startGateway } from './gateway-lib.ts';
import { TAIL } from '../../../gateway/cache/mapped-bodies.ts';

afterAll(runTeardowns);

// 2 MiB + 1000: above --mem-object-max (memory tier stays out), below 16 MiB (mapped), and the
// body's end falls inside a page.
const SIZE = 2 * 2 ** 20 + 1000;

describe('an entry file cut short inside its last page while mapped', () => {
  it('never answers a whole 200 with the cut bytes zeroed', async () => {
    const body = pattern(SIZE, 3);
    let asked = 0;
    const port = await origin((_req, res) => {
      asked++;
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'max-age=86400', 'content-length': SIZE });
      res.end(body);
    });
    const dir = await tempDir('gwmap-trunc-');
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${port}`, '--cache-dir', dir, '--workers', '1']);
    expect((await get(gw.port, '/big')).body.equals(body)).toBe(true);
    const files = entryFiles(dir);
    expect(files).toHaveLength(1);
    // Two disk hits: the body is mapped and held by the worker.
    for (let i = 0; i < 2; i++) {
      const r = await get(gw.port, '/big');
      expect(r.body.equals(body)).toBe(true);
    }
    // A hit right after the miss may still find the fill being committed (its fsync): ask until
    // one is answered from the disk entry, so mapped.
    for (let i = 0; i < 30 && (await metric(gw.port, 'estuary_gateway_disk_mapped_bytes')) === 0; i++) {
      await get(gw.port, '/big');
      await sleep(100);
    }
    // The mapping holds all but the body's last TAIL bytes, sent from a copy.
    expect(await metric(gw.port, 'estuary_gateway_disk_mapped_bytes')).toBe(SIZE - TAIL);
    expect(asked).toBe(1);

    truncateSync(files[0]!, SIZE - 16);

    for (let i = 0; i < 3; i++) {
      const r = await get(gw.port, '/big');
      const whole = r.status === 200 && r.error === undefined && r.body.length === SIZE;
      if (whole) {
        // A complete answer must carry the stored bytes, not zeros in place of the cut ones.
        expect(r.body.subarray(SIZE - 16).toString('hex')).toBe(body.subarray(SIZE - 16).toString('hex'));
      }
    }
    // The damaged entry is dropped and fetched again, as for a cut found by a read.
    expect(asked).toBeGreaterThan(1);
  }, 30_000);
});
