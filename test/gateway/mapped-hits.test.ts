// Disk hits written from the page cache (docs/CACHING.md, "Disk hits from the page cache"), through
// a real gateway: the bytes, ranges and HEAD of a mapped body; an entry file cut short under its
// mapping; a purge while a slow client is still being written to from the mapping.

import { randomBytes } from 'node:crypto';
import { Agent, get as httpGet } from 'node:http';
import { readdirSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { forwardKey } from '../../gateway/cache/key.ts';
import { TAIL } from '../../gateway/cache/mapped-bodies.ts';
import { Metrics } from '../../gateway/metrics.ts';
import { onTeardown, runTeardowns } from '../helpers/cleanup.ts';
import { tempDir } from '../helpers/tmp.ts';
import { send } from './helpers/client.ts';
import { startGatewayProcess, startTestGateway } from './helpers/gateway.ts';
import { fixed, startOrigin } from './helpers/origin.ts';

afterAll(runTeardowns);

const CACHED = { 'cache-control': 'max-age=3600' };

/** The entry files of a cache directory. */
function entryFiles(cacheDir: string): string[] {
  const root = join(cacheDir, 'v1');
  return readdirSync(root)
    .filter((d) => /^[0-9a-f]{2}$/.test(d))
    .flatMap((d) => readdirSync(join(root, d)).map((f) => join(root, d, f)));
}

async function mappedBytes(gw: string): Promise<number> {
  const text = await (await fetch(`${gw}/metrics`)).text();
  return Number(/^estuary_gateway_disk_mapped_bytes (\d+)/m.exec(text)?.[1]);
}

/** A gateway whose memory tier holds nothing, so every hit is a disk hit. */
async function diskOnly(): Promise<{ url: string; cacheDir: string; gw: Awaited<ReturnType<typeof startTestGateway>> }> {
  const cacheDir = await tempDir('estuary-gw-mapped-');
  const gw = await startTestGateway({ cacheDir, memCache: 0 });
  return { url: gw.url, cacheDir, gw };
}

describe('disk hits from the page cache', () => {
  it('answers whole bodies, ranges and HEAD from one mapping, and counts it', async () => {
    const body = randomBytes(3 * 2 ** 20 + 17);
    const origin = await startOrigin({ '/obj': fixed(body, CACHED) });
    const { url, gw } = await diskOnly();
    const target = `${origin.url}/obj`;
    expect((await send(url, target)).body.equals(body)).toBe(true);
    // A hit right after the miss may still find the fill being committed: ask until one is mapped.
    for (let i = 0; i < 30 && gw.cache.mapped.count === 0; i++) await send(url, target);
    const hit = await send(url, target);
    expect(hit.body.equals(body)).toBe(true);
    expect(hit.headers['cache-status']).toMatch(/hit/);
    expect(gw.cache.mapped.count).toBe(1);
    expect(await mappedBytes(url)).toBe(body.length - TAIL);
    expect(await (await fetch(`${url}/metrics`)).text()).toMatch(/^estuary_gateway_disk_mapping_unavailable 0$/m);
    const range = await send(url, target, { headers: { range: 'bytes=1048570-1048600' } });
    expect(range.status).toBe(206);
    expect(range.body.equals(body.subarray(1048570, 1048601))).toBe(true);
    const suffix = await send(url, target, { headers: { range: 'bytes=-5' } });
    expect(suffix.body.equals(body.subarray(body.length - 5))).toBe(true);
    const head = await send(url, target, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(Number(head.headers['content-length'])).toBe(body.length);
    expect(origin.count('/obj')).toBe(1);
    expect(gw.metrics.diskHit.value).toBeGreaterThanOrEqual(4);
  });

  it('does not hold the last bytes of a mapped answer for the client\'s delayed ACK (its connection gets TCP_NODELAY)', async () => {
    // One segment for all but the last bytes: the client holds its ACK for more.
    const body = randomBytes(4000);
    const origin = await startOrigin({ '/ack': fixed(body, CACHED) });
    const gw = await startGatewayProcess(['--upstream', `o=${origin.url}`, '--workers', '1', '--mem-cache', '0']);
    onTeardown(async () => {
      await gw.child.stop();
    });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    onTeardown(() => agent.destroy());
    const get = () =>
      new Promise<Buffer>((resolve, reject) => {
        httpGet(`${gw.url}/ack`, { agent }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve(Buffer.concat(chunks)));
        }).on('error', reject);
      });
    await get();
    expect((await get()).equals(body)).toBe(true);
    const started = performance.now();
    for (let i = 0; i < 40; i++) expect((await get()).length).toBe(body.length);
    // With Nagle's algorithm each answer's last segment waits for the client's delayed ACK
    // (40 ms on Linux): 40 answers would take 1.6 s or more.
    expect(performance.now() - started).toBeLessThan(800);
    expect(origin.count('/ack')).toBe(1);
  });

  it('says in its metrics when bodies cannot be mapped', async () => {
    const sizes = { memoryBytes: () => 0, memoryObjects: () => 0, diskBytes: () => 0, diskObjects: () => 0, diskIndexBytes: () => 0 };
    const off = new Metrics({ ...sizes, mappingUnavailable: () => 'lib/native was not built' });
    expect(await off.registry.metrics()).toMatch(/^estuary_gateway_disk_mapping_unavailable 1$/m);
  });

  it('refetches an entry whose file another program cut short under its mapping', async () => {
    const body = randomBytes(2 ** 20);
    const origin = await startOrigin({ '/cut': fixed(body, CACHED) });
    const { url, cacheDir, gw } = await diskOnly();
    const target = `${origin.url}/cut`;
    await send(url, target);
    for (let i = 0; i < 30 && gw.cache.mapped.count === 0; i++) expect((await send(url, target)).body.equals(body)).toBe(true);
    expect(gw.cache.mapped.count).toBe(1);
    const [file] = entryFiles(cacheDir);
    truncateSync(file!, 300_000);
    const after = await send(url, target);
    expect(after.complete).toBe(true);
    expect(after.body.equals(body)).toBe(true);
    expect(origin.count('/cut')).toBe(2);
    // That request passed through; the next stores the object again, and the one after is a hit.
    await send(url, target);
    const again = await send(url, target);
    expect(again.body.equals(body)).toBe(true);
    expect(again.headers['cache-status']).toMatch(/hit/);
    expect(origin.count('/cut')).toBe(3);
  });

  it('keeps writing a purged body to a slow client from its mapping, then frees the file', async () => {
    const body = randomBytes(16 * 2 ** 20);
    const origin = await startOrigin({ '/slow': fixed(body, CACHED) });
    const { url, cacheDir, gw } = await diskOnly();
    const target = `${origin.url}/slow`;
    await send(url, target);
    // Asked until a hit is mapped: the fill's answer can end before its entry is committed.
    for (let i = 0; i < 30 && gw.cache.mapped.count === 0; i++) expect((await send(url, target)).body.equals(body)).toBe(true);
    const [file] = entryFiles(cacheDir);
    expect(statSync(file!).size).toBeGreaterThan(body.length);
    let purged: Promise<boolean> | undefined;
    let mappedWhileSending = 0;
    const slow = send(url, target, {
      slowBytesPerMs: 8000,
      onFirstBytes: () => {
        mappedWhileSending = gw.cache.mapped.count;
        purged = gw.cache.invalidate(forwardKey(new URL(target)));
      },
    });
    const reply = await slow;
    expect(mappedWhileSending).toBe(1);
    expect(await purged).toBe(true);
    expect(reply.complete).toBe(true);
    expect(reply.body.equals(body)).toBe(true);
    expect(gw.cache.mapped.count).toBe(0);
    expect(await mappedBytes(url)).toBe(0);
    expect(entryFiles(cacheDir)).toEqual([]);
  });
});
