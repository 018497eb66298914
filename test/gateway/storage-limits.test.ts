// What the gateway does when it cannot store: a file system that fills up before --disk-cache is
// reached (a real tmpfs, so ENOSPC is the kernel's), a body of unknown length that outgrows
// --max-object-size, and an origin that fails before the first body byte. Every client must get
// a complete answer or a clear error status, never an empty reply or a body cut on every try.

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { onTeardown } from '../helpers/cleanup.ts';
import { tempDir } from '../helpers/tmp.ts';
import { send } from './helpers/client.ts';
import { startTestGateway } from './helpers/gateway.ts';
import { fixed, startOrigin, type Route } from './helpers/origin.ts';

const run = promisify(execFile);
const MiB = 1024 * 1024;

/** A tmpfs of `sizeMiB` mounted for this test file, unmounted after it. */
async function smallDisk(sizeMiB: number): Promise<string> {
  const dir = await tempDir('estuary-gw-full-');
  await run('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m`, 'tmpfs', dir]);
  onTeardown(() => run('umount', ['-l', dir]).then(() => undefined));
  return dir;
}

/** A body without Content-Length (chunked), in 64 KiB pieces. */
function chunked(body: Buffer, headers: Record<string, string> = {}): Route {
  return async (_req, res) => {
    res.writeHead(200, headers);
    for (let off = 0; off < body.length; off += 64 * 1024) {
      if (!res.write(body.subarray(off, off + 64 * 1024))) await new Promise((r) => res.once('drain', r));
    }
    res.end();
  };
}

const cacheable = { 'cache-control': 'max-age=600' };

describe('a cache disk that is full before --disk-cache is reached', async () => {
  const disk = await smallDisk(4);
  const origin = await startOrigin();
  const bodies = {
    small: randomBytes(100 * 1024),
    mid: randomBytes(MiB),
    big: randomBytes(3 * MiB),
    chunked: randomBytes(2 * MiB),
  };
  for (const [name, body] of Object.entries(bodies)) {
    origin.route(`/${name}`, name === 'chunked' ? chunked(body, cacheable) : fixed(body, cacheable));
  }

  it('answers every miss completely, twice, while nothing fits', async () => {
    const gw = await startTestGateway({ cacheDir: join(disk, 'cache') });
    // Leave about 64 KiB: the cache's own directories fit, no object does.
    const { stdout } = await run('df', ['-B1', '--output=avail', disk]);
    const avail = Number(stdout.trim().split('\n')[1]);
    await writeFile(join(disk, 'ballast'), Buffer.alloc(Math.max(0, avail - 64 * 1024)));
    for (let round = 0; round < 2; round++) {
      for (const [name, body] of Object.entries(bodies)) {
        const r = await send(gw.url, `${origin.url}/${name}`);
        expect(r.status, name).toBe(200);
        expect(r.complete, name).toBe(true);
        expect(r.body.equals(body), name).toBe(true);
        expect(String(r.headers['cache-status']), name).not.toMatch(/stored/);
      }
    }
    // The status page says so first, in words.
    const page = (await send(gw.url, '/estuary/v1/status')).body.toString();
    expect(page.slice(0, page.indexOf('<h2>'))).toMatch(/⚠ (The cache&#39;s file system .* is full: new objects pass through unstored|Only .* free on the cache&#39;s file system)/);
  });
});

describe('a cache disk full of its own entries', async () => {
  const disk = await smallDisk(6);
  const origin = await startOrigin();
  const bodies = Array.from({ length: 5 }, () => randomBytes(MiB + 512 * 1024));
  bodies.forEach((b, i) => origin.route(`/o${i}`, fixed(b, cacheable)));

  it('evicts old entries to store new ones, and serves each new one from the cache', async () => {
    const gw = await startTestGateway({ cacheDir: join(disk, 'cache'), diskCache: 1024 * MiB });
    for (let i = 0; i < bodies.length; i++) {
      const r = await send(gw.url, `${origin.url}/o${i}`);
      expect(r.body.equals(bodies[i]!), `o${i}`).toBe(true);
      const hit = await send(gw.url, `${origin.url}/o${i}`);
      expect(hit.body.equals(bodies[i]!), `o${i} again`).toBe(true);
      expect(String(hit.headers['cache-status']), `o${i} again`).toMatch(/hit/);
    }
    const metrics = (await send(gw.url, '/metrics')).body.toString();
    expect(Number(/estuary_gateway_disk_evictions_total (\d+)/.exec(metrics)?.[1])).toBeGreaterThan(0);
    expect((await send(gw.url, '/estuary/v1/status')).body.toString()).toMatch(/free on the file system; [1-9][\d,]* evicted to make room/);
  });
});

describe('a body of unknown length over --max-object-size', async () => {
  const origin = await startOrigin();
  const body = randomBytes(3 * MiB);
  origin.route('/huge', chunked(body, cacheable));

  it('reaches the client whole on every try and is not stored', async () => {
    const gw = await startTestGateway({ maxObjectSize: MiB });
    const first = await send(gw.url, `${origin.url}/huge`);
    expect(first.complete).toBe(true);
    expect(first.body.equals(body)).toBe(true);
    expect(String(first.headers['cache-status'])).not.toMatch(/stored/);
    const second = await send(gw.url, `${origin.url}/huge`);
    expect(second.body.equals(body)).toBe(true);
    expect(String(second.headers['cache-status'])).toMatch(/fwd=miss; detail=too-large/);
    expect(origin.count('/huge')).toBe(2);
    expect(gw.cache.lookup(`${origin.url}/huge`)).toBeUndefined();
  });
});

describe('an origin that fails before the first body byte', async () => {
  const origin = await startOrigin();
  origin.route('/cut', (_req, res) => {
    res.writeHead(200, { 'content-length': 1000, ...cacheable });
    res.flushHeaders();
    setTimeout(() => res.socket?.destroy(), 30);
  });

  it('gets a 502 with Proxy-Status, not an empty reply', async () => {
    const gw = await startTestGateway();
    const r = await send(gw.url, `${origin.url}/cut`);
    expect(r.status).toBe(502);
    expect(r.complete).toBe(true);
    expect(String(r.headers['proxy-status'])).toMatch(/^estuary; error=/);
    expect(String(r.headers['cache-status'] ?? '')).not.toMatch(/stored/);
  });
});
