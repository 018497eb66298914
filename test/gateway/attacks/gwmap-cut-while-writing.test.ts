// Attack: another program cuts a mapped entry file short (to 0, to mid-body, inside a page) while
// slow clients are being answered from its mapping; the body is exactly 16 MiB, the largest that
// is mapped.
//
// Expected (docs/CACHING.md, "Disk hits from the page cache": "An answer already writing from it
// when it is cut ends early; the worker is not harmed, because only the kernel, never JavaScript,
// reads a mapping", and "the next hit finds it not all in memory, reads it, finds it short and
// goes to the origin"): each slow answer is either the stored bytes or cut short, the worker is
// the same process afterwards, and the next hit is the origin's body again.

import net from 'node:net';
import { truncateSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { entryFiles, get, metric, origin, workers } from './disk-lib.ts';
import { pattern, sleep, startGateway } from './gateway-lib.ts';
import { TAIL } from '../../../gateway/cache/mapped-bodies.ts';

afterAll(runTeardowns);

const SIZE = 16 * 2 ** 20;

/** A client that reads the head and a little of the body, then stops reading until `resume`. */
function slowClient(port: number, path: string) {
  const s = net.connect(port, '127.0.0.1', () => s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`));
  let out = Buffer.alloc(0);
  let error: string | undefined;
  s.on('data', (d: Buffer) => {
    out = Buffer.concat([out, d]);
    s.pause();
  });
  s.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
  const done = new Promise<{ body: Buffer; head: string; error?: string }>((resolve) =>
    s.on('close', () => {
      const i = out.indexOf('\r\n\r\n');
      resolve({ head: out.subarray(0, i).toString('latin1'), body: out.subarray(i + 4), error });
    }),
  );
  return {
    resume: () => {
      s.removeAllListeners('data');
      s.on('data', (d: Buffer) => (out = Buffer.concat([out, d])));
      s.resume();
    },
    done,
  };
}

describe('a mapped entry file cut short while slow answers write from it', () => {
  for (const [name, cut] of [
    ['to 0', 0],
    ['to mid-body', SIZE / 2 + 123],
    ['inside its last page', SIZE - 100],
  ] as const) {
    it(`cut ${name}: answers are right or cut, the worker lives, the next hit is refetched`, async () => {
      const body = pattern(SIZE, 9);
      let asked = 0;
      const port = await origin((_req, res) => {
        asked++;
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'max-age=86400', 'content-length': SIZE });
        res.end(body);
      });
      const dir = await tempDir('gwmap-cut-');
      const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${port}`, '--cache-dir', dir, '--workers', '1']);
      const worker = workers(gw.child.pid)[0];
      expect((await get(gw.port, '/big')).body.equals(body)).toBe(true);
      expect((await get(gw.port, '/big')).body.equals(body)).toBe(true);
      // A hit right after the miss may still find the fill being committed (its fsync): ask until
      // one is answered from the disk entry, so mapped.
      for (let i = 0; i < 30 && (await metric(gw.port, 'estuary_gateway_disk_mapped_bytes')) === 0; i++) {
        await get(gw.port, '/big');
        await sleep(100);
      }
      // The mapping holds all but the body's last TAIL bytes, sent from a copy.
      expect(await metric(gw.port, 'estuary_gateway_disk_mapped_bytes')).toBe(SIZE - TAIL);
      const clients = [slowClient(gw.port, '/big'), slowClient(gw.port, '/big'), slowClient(gw.port, '/big')];
      await sleep(500);
      truncateSync(entryFiles(dir)[0]!, cut);
      await sleep(200);
      for (const c of clients) c.resume();
      for (const r of await Promise.all(clients.map((c) => c.done))) {
        expect(r.head).toMatch(/^HTTP\/1\.1 200/);
        if (r.body.length === SIZE) expect(r.body.equals(body), 'a whole answer with wrong bytes').toBe(true);
      }
      expect(workers(gw.child.pid)[0]).toBe(worker);
      let next = await get(gw.port, '/big');
      // The first hit after the cut may itself still be cut; the one after must be whole.
      if (next.error !== undefined || next.body.length !== SIZE) next = await get(gw.port, '/big');
      expect(next.status).toBe(200);
      expect(next.error).toBeUndefined();
      expect(next.body.equals(body)).toBe(true);
      expect(asked).toBe(2);
      expect(workers(gw.child.pid)[0]).toBe(worker);
    }, 30_000);
  }
});
