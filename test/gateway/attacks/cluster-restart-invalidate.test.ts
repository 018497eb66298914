// Attack: a write acknowledged while a replacement worker starts (after another was killed -9).
//
// A new worker reads every entry's trailer to build its index, and only then listens to the
// primary's messages; whatever the primary relays meanwhile (an invalidation by a write on
// another worker, a stored entry, an eviction) is dropped. A site cache of millions of entries
// takes minutes to read; the test gives it 20,000 entries, a few seconds' read (cloneEntries).
//
// docs/CACHING.md ("Unsafe methods"): a successful PUT invalidates the stored entry for that URL;
// docs/STAGING.md: "every read that starts after a write's 200 sees the new version". Expected:
// after the PUT's answer, no worker — the replacement included — answers a HEAD with the replaced
// version's ETag, nor a conditional GET for that ETag with 304.

import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { EntryMeta } from '../../../gateway/cache/entry.ts';
import { decodeTail, encodeTrailer, TRAILER_FIXED } from '../../../gateway/cache/format.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { startOrigin } from '../helpers/origin.ts';
import { clusterGateway, connsOnWorkers, waitWorkers, workerPids } from './cluster-lib.ts';
import { get } from './disk-lib.ts';
import { sleep } from './gateway-lib.ts';

afterAll(runTeardowns);

/** The file of the entry whose key ends with `suffix`. */
function entryFile(v1: string, suffix: string): string {
  for (const sub of readdirSync(v1)) {
    if (!/^[0-9a-f]{2}$/.test(sub)) continue;
    for (const name of readdirSync(join(v1, sub))) {
      const buf = readFileSync(join(v1, sub, name));
      const len = buf.readUInt32BE(buf.length - 12);
      const meta = JSON.parse(buf.subarray(buf.length - 12 - len, buf.length - 12).toString()) as { key: string };
      if (meta.key.endsWith(suffix)) return join(v1, sub, name);
    }
  }
  throw new Error(`no entry for ${suffix}`);
}

/**
 * Makes a replacement worker's index read last a few seconds: `n` copies of `file`'s entry under
 * other keys, as a site cache of millions of entries takes minutes to read.
 */
function cloneEntries(file: string, n: number): void {
  const buf = readFileSync(file);
  const len = decodeTail(buf.subarray(buf.length - TRAILER_FIXED))!;
  const meta = JSON.parse(buf.subarray(buf.length - TRAILER_FIXED - len, buf.length - TRAILER_FIXED).toString('utf8')) as EntryMeta;
  const body = buf.subarray(0, meta.size);
  const root = join(file, '..', '..');
  for (let i = 0; i < n; i++) {
    const m: EntryMeta = { ...meta, key: `${meta.key}-clone-${i}`, url: `${meta.url}-clone-${i}`, responseTime: meta.responseTime - 1 };
    const name = randomBytes(16).toString('hex');
    mkdirSync(join(root, name.slice(0, 2)), { recursive: true });
    writeFileSync(join(root, name.slice(0, 2), name), Buffer.concat([body, encodeTrailer(m)]));
  }
}

/** Files the replacement's index read has still to read, from /metrics (0 once it is whole). */
async function unreadFiles(port: number): Promise<number> {
  const r = await get(port, '/metrics');
  const line = r.body.toString().split('\n').find((l: string) => l.startsWith('estuary_gateway_disk_index_unread_files'));
  return Number(line?.split(' ').at(-1) ?? 0);
}

describe('attack: a write acknowledged while a replacement worker builds its index', () => {
  it('the replacement worker does not answer HEAD or If-None-Match with the version the write replaced', async () => {
    let version = 0;
    const origin = await startOrigin();
    origin.route('/obj', (req: IncomingMessage, res: ServerResponse) => {
      if (req.method === 'PUT') {
        req.resume();
        req.on('end', () => {
          version++;
          res.writeHead(204);
          res.end();
        });
        return;
      }
      const body = `version ${version}`;
      res.writeHead(200, { 'cache-control': 'max-age=600', etag: `"v${version}"`, 'content-length': body.length });
      res.end(req.method === 'HEAD' ? undefined : body);
    });
    const gw = await clusterGateway(origin.url, 2);
    const [victim, survivor] = workerPids(gw.child.pid) as [number, number];
    const a = (await connsOnWorkers(gw.port, [survivor])).get(survivor)!;
    expect((await a.request('GET', '/obj')).headers.etag).toBe('"v0"');
    await sleep(200);
    cloneEntries(entryFile(join(gw.cacheDir, 'v1'), '/obj'), 20_000);

    process.kill(victim, 'SIGKILL');
    const until = Date.now() + 20_000;
    let fresh: number | undefined;
    while (fresh === undefined && Date.now() < until) {
      fresh = workerPids(gw.child.pid).find((p) => p !== victim && p !== survivor);
      await sleep(10);
    }
    expect(fresh, 'a replacement worker').toBeDefined();
    while ((await unreadFiles(gw.port)) === 0 && Date.now() < until) await sleep(20);
    expect((await a.request('PUT', '/obj', {}, 'new')).status).toBe(204);
    // The write was answered while the replacement was still reading its index.
    expect(await unreadFiles(gw.port), 'the replacement worker was still reading its index').toBeGreaterThan(0);
    while ((await unreadFiles(gw.port)) > 0 && Date.now() < until + 20_000) await sleep(100);

    await waitWorkers(gw.child.pid, 2, [victim]);
    const d = (await connsOnWorkers(gw.port, [fresh!])).get(fresh!)!;
    const head = await d.request('HEAD', '/obj');
    expect(head.headers.etag, `HEAD on the replacement: ${head.headers['cache-status']}`).not.toBe('"v0"');
    const cond = await d.request('GET', '/obj', { 'if-none-match': '"v0"' });
    expect(cond.status, `If-None-Match "v0" on the replacement: ${cond.headers['cache-status']}`).toBe(200);
    expect(cond.body.toString()).toBe('version 1');
  }, 60_000);
});

describe('attack: a worker killed after it stored a version a write on another worker had replaced', () => {
  it('the replacement worker does not serve the version the acknowledged write replaced', async () => {
    let version = 0;
    const origin = await startOrigin();
    origin.route('/doc', (req: IncomingMessage, res: ServerResponse) => {
      if (req.method === 'PUT') {
        req.resume();
        req.on('end', () => {
          version++;
          res.writeHead(204);
          res.end();
        });
        return;
      }
      // The version is fixed when the request arrives; the body takes a second to finish.
      const body = `version ${version}`.padEnd(4096, '.');
      res.writeHead(200, { 'cache-control': 'max-age=600', etag: `"v${version}"`, 'content-length': body.length });
      res.write(body.slice(0, 100));
      setTimeout(() => res.end(body.slice(100)), 1000);
    });
    const gw = await clusterGateway(origin.url, 2);
    const [filler, writer] = workerPids(gw.child.pid) as [number, number];
    const b = (await connsOnWorkers(gw.port, [filler])).get(filler)!;
    const a = (await connsOnWorkers(gw.port, [writer])).get(writer)!;
    // B starts fetching version 0.
    const early = b.request('GET', '/doc');
    await sleep(300);
    // The primary is slow for a moment (a long GC, a busy gather, a descheduled process): it
    // relays nothing meanwhile. A write is acknowledged by A during that moment.
    process.kill(gw.child.pid, 'SIGSTOP');
    onTeardown(() => {
      try {
        process.kill(gw.child.pid, 'SIGCONT');
      } catch {
        // gone
      }
    });
    try {
      expect((await a.request('PUT', '/doc', {}, 'new')).status).toBe(204);
      // B's fetch (begun before the write) ends and is stored; B dies before it hears of the write.
      expect((await early).body.subarray(0, 9).toString()).toBe('version 0');
      await sleep(300);
      process.kill(filler, 'SIGKILL');
    } finally {
      process.kill(gw.child.pid, 'SIGCONT');
    }
    await waitWorkers(gw.child.pid, 2, [filler]);
    const replacement = workerPids(gw.child.pid).find((p) => p !== writer && p !== filler)!;
    const d = (await connsOnWorkers(gw.port, [replacement])).get(replacement)!;
    const got = await d.request('GET', '/doc');
    expect(got.body.subarray(0, 9).toString(), `on the replacement worker: ${got.headers['cache-status']}`).toBe('version 1');
    const onA = await a.request('GET', '/doc');
    expect(onA.body.subarray(0, 9).toString(), `on the writing worker: ${onA.headers['cache-status']}`).toBe('version 1');
  }, 60_000);
});
