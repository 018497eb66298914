// Attack: remap churn. An entry that must be revalidated on every hit (max-age=0 with an ETag)
// gets a 304 from its origin each time, and each 304 rewrites the entry file's trailer, which
// gives it a new change time, so the next answer maps the body anew (mapped-bodies.ts). Slow
// clients hold answers from the older mappings while that happens, and some are killed mid-answer.
//
// Expected (docs/CACHING.md, "Disk hits from the page cache"): every answer that completes is the
// whole, right body; a mapping is "unmapped once the last answer writing from it has closed,
// however it closed", and each answer's descriptor is closed with it. Once every client is gone,
// the worker holds at most one mapping of the entry file and no descriptor of it.

import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { get, metric, origin, workers } from './disk-lib.ts';
import { pattern, sleep, startGateway } from './gateway-lib.ts';

afterAll(runTeardowns);

const BODY = pattern(14 * 1024 * 1024 + 17, 5);
const ETAG = '"churn"';

/**
 * A client that sends its request, reads its first bytes (`started`: the answer is being written,
 * from the mapping of the moment), then nothing until `drain` is called.
 */
function slowClient(port: number): { started: Promise<void>; drain: () => Promise<Buffer>; kill: () => void } {
  const s = net.connect(port, '127.0.0.1');
  s.setNoDelay(true);
  s.write('GET /obj HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
  const parts: Buffer[] = [];
  const started = new Promise<void>((resolve) => {
    s.once('data', () => {
      s.pause();
      resolve();
    });
  });
  s.on('data', (d: Buffer) => parts.push(d));
  s.on('error', () => undefined);
  return {
    started,
    drain: () =>
      new Promise((resolve) => {
        s.on('close', () => resolve(Buffer.concat(parts)));
        s.resume();
      }),
    kill: () => s.resetAndDestroy(),
  };
}

function bodyOf(raw: Buffer): Buffer {
  const i = raw.indexOf('\r\n\r\n');
  return raw.subarray(i + 4);
}

function held(pid: number, dir: string): { fds: number; maps: number } {
  let fds = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith(dir)) fds++;
    } catch {
      // closed meanwhile
    }
  }
  const maps = readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n').filter((l) => l.includes(dir)).length;
  return { fds, maps };
}

describe('revalidations in a row while answers are in flight', () => {
  it('cut no good answer and leave no mapping or descriptor behind', async () => {
    let revalidations = 0;
    const port = await origin((req, res) => {
      if (req.headers['if-none-match'] === ETAG) {
        revalidations++;
        res.writeHead(304, { etag: ETAG, 'cache-control': 'max-age=0' });
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'max-age=0', etag: ETAG, 'content-length': BODY.length });
      res.end(BODY);
    });
    const dir = await tempDir('gwmap3-churn-');
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${port}`, '--cache-dir', dir, '--workers', '1', '--mem-object-max', '0']);
    const [pid] = workers(gw.child.pid!);
    expect(pid).toBeGreaterThan(0);
    for (let i = 0; i < 20 && (await metric(gw.port, 'estuary_gateway_disk_mapped_bytes')) === 0; i++) {
      expect((await get(gw.port, '/obj')).body.equals(BODY)).toBe(true);
      await sleep(100);
    }
    expect(await metric(gw.port, 'estuary_gateway_disk_mapped_bytes')).toBeGreaterThan(0);
    const r0 = revalidations;

    const pending: Promise<Buffer>[] = [];
    for (let round = 0; round < 12; round++) {
      const a = slowClient(gw.port);
      const b = slowClient(gw.port);
      // Both answers are being written before the hit that revalidates (a slow client whose
      // request came in after it would join that revalidation instead of holding a mapping).
      await Promise.all([a.started, b.started]);
      const hit = await get(gw.port, '/obj');
      expect(hit.error, `round ${round}`).toBeUndefined();
      expect(hit.body.equals(BODY), `round ${round}`).toBe(true);
      if (round % 3 === 0) b.kill();
      else pending.push(b.drain());
      pending.push(a.drain());
    }
    expect(revalidations - r0).toBeGreaterThan(6);
    // The slow answers hold older mappings and their descriptors now (else this test proves nothing).
    const during = held(pid, dir);
    expect(during.maps, 'mappings held by answers in flight').toBeGreaterThan(1);
    expect(during.fds, 'descriptors held by answers in flight').toBeGreaterThan(1);
    const bodies = await Promise.all(pending);
    const bad = bodies.filter((raw) => !bodyOf(raw).equals(BODY)).length;
    expect(bad, 'slow answers cut or wrong').toBe(0);
    await sleep(500);
    const h = held(pid, dir);
    expect(h.fds, 'descriptors of cache files').toBe(0);
    expect(h.maps, 'mappings of cache files').toBeLessThanOrEqual(1);
  }, 40_000);
});
