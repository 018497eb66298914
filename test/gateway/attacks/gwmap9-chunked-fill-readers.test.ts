// Attack: first readers of an object the origin sends chunked (no Content-Length), so the fill
// does not know its length: ranged and conditional leaders and joiners, storable, and over
// --max-object-size (the fill outgrows the limit while clients stream from it).
//
// docs/CACHING.md: "A range request for an object not yet stored starts one fetch of the whole
// object and answers the range from it as soon as its bytes arrive"; "a first read that names
// the version it holds gets 304"; "Only a body of known length within the limits is sure to be
// stored once complete; one of unknown length may outgrow --max-object-size and then passes
// through unstored"; tenet 1: never a partial body as if whole.
// Expected: a ranged reader gets 206 with its 100 bytes (not the whole object); a plain reader
// gets every byte, exactly, or a visible cut; a matching If-None-Match gets 304.

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { get, origin } from './disk-lib.ts';
import { pattern, sleep, startGateway } from './gateway-lib.ts';

afterAll(runTeardowns);

const SIZE = 3 << 20;
const BODY = pattern(SIZE, 5);

async function chunkedOrigin(seen: string[]): Promise<number> {
  return origin((req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers.range ?? '-'} ${req.headers['if-none-match'] ?? '-'}`);
    const h = { 'cache-control': 'max-age=600', etag: '"c1"', 'content-type': 'application/octet-stream' };
    if (req.headers['if-none-match'] === '"c1"') { res.writeHead(304, h).end(); return; }
    const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    if (m) {
      const [s, e] = [Number(m[1]), Number(m[2])];
      res.writeHead(206, { ...h, 'content-range': `bytes ${s}-${e}/${SIZE}`, 'content-length': String(e - s + 1) }).end(BODY.subarray(s, e + 1));
      return;
    }
    res.writeHead(200, h); // no Content-Length: chunked
    let off = 0;
    const tick = () => {
      if (res.destroyed) return;
      if (off >= SIZE) { res.end(); return; }
      res.write(BODY.subarray(off, off + 65536));
      off += 65536;
      setTimeout(tick, 10);
    };
    tick();
  });
}

describe('first readers of a chunked object', () => {
  for (const limit of ['4GiB', '2MiB']) {
    it(`ranged, conditional and plain leaders and joiners (--max-object-size ${limit})`, async () => {
      const seen: string[] = [];
      const port = await chunkedOrigin(seen);
      const g = await startGateway(['--cache-dir', await tempDir('estuary-atk-map9-'), '--upstream', `default=http://127.0.0.1:${port}`, '--max-object-size', limit, '--mem-object-max', '0']);
      const bad: string[] = [];
      const check = (who: string, r: Awaited<ReturnType<typeof get>>, want: 'whole' | 'range' | '304', at = 0) => {
        const cs = String(r.headers['cache-status']);
        if (want === 'whole' && r.error === undefined && (r.status !== 200 || !r.body.equals(BODY))) bad.push(`${who}: ${r.status} ${r.body.length} bytes, complete but not the object (${cs})`);
        if (want === 'range' && (r.status !== 206 || !r.body.equals(BODY.subarray(at, at + 100)))) bad.push(`${who}: ${r.status} with ${r.body.length} bytes${r.error ? ` (${r.error})` : ''}, want 206 with 100 (${cs})`);
        if (want === '304' && r.status !== 304) bad.push(`${who}: ${r.status} with ${r.body.length} bytes, want 304 (${cs})`);
      };
      // Leaders, each on its own URL.
      check('range leader', await get(g.port, '/a', { range: 'bytes=2500000-2500099' }), 'range', 2500000);
      check('If-None-Match leader', await get(g.port, '/b', { 'if-none-match': '"c1"' }), '304');
      check('plain leader', await get(g.port, '/c'), 'whole');
      // Joiners of one fill.
      const leader = get(g.port, '/d');
      await sleep(150);
      const joiners = [
        get(g.port, '/d', { range: 'bytes=100-199' }).then((r) => check('range joiner (early bytes)', r, 'range', 100)),
        get(g.port, '/d', { range: 'bytes=3000000-3000099' }).then((r) => check('range joiner (past the limit)', r, 'range', 3000000)),
        get(g.port, '/d', { 'if-none-match': '"c1"' }).then((r) => check('If-None-Match joiner', r, '304')),
        get(g.port, '/d').then((r) => check('plain joiner', r, 'whole')),
      ];
      check('plain leader of the joined fill', await leader, 'whole');
      await Promise.all(joiners);
      expect(bad, `${bad.join('\n')}\norigin saw: ${seen.join(' | ')}`).toEqual([]);
    }, 90_000);
  }
});
