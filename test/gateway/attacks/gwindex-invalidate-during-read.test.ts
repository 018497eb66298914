// Attack: an unsafe request (DELETE) sent through a replacement worker while it reads its disk
// index. Expected (docs/CACHING.md, "unsafe methods ... invalidate"; RFC 9111 §4.4): once the
// DELETE has been answered, a GET for that key is never served the stored copy from before the
// DELETE — the index read that finishes later must not bring the invalidated entry back.

import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { startGateway, sleep } from './gateway-lib.ts';
import { get, origin, workers } from './disk-lib.ts';

afterAll(runTeardowns);

const ENTRIES = 3000;

describe('invalidation during the replacement worker index read', () => {
  it('a DELETE answered during the read keeps the old copy from coming back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gwindex-inv-'));
    onTeardown(() => import('node:fs/promises').then((f) => f.rm(dir, { recursive: true, force: true })));
    let version = 1;
    const up = await origin((req, res) => {
      if (req.method === 'DELETE') {
        version++;
        res.writeHead(204).end();
        return;
      }
      const body = req.url === '/target' ? `v${version}`.padEnd(100, '.') : `x${req.url}`.padEnd(200, '.');
      res.writeHead(200, { 'cache-control': 'max-age=3600', 'content-type': 'text/plain' }).end(body);
    });
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${up}`, '--cache-dir', dir, '--disk-cache', '1GiB', '--mem-object-max', '1']);
    expect((await get(gw.port, '/target')).body.toString()).toBe('v1'.padEnd(100, '.'));
    for (let i = 0; i < ENTRIES; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, j) => get(gw.port, `/f/${i + j}`)));
    }
    expect((await get(gw.port, '/target')).body.toString()).toBe('v1'.padEnd(100, '.'));
    await sleep(500);
    const [w] = workers(gw.child.pid!);
    process.kill(w!, 'SIGKILL');
    // DELETE as soon as anything answers: this lands while the replacement reads its index.
    const del = await new Promise<number>((resolve) => {
      const tryOnce = async () => {
        const r = await fetch(`http://127.0.0.1:${gw.port}/target`, { method: 'DELETE' }).catch(() => undefined);
        if (r) resolve(r.status);
        else setTimeout(tryOnce, 5);
      };
      void tryOnce();
    });
    expect(del).toBe(204);
    expect(version).toBe(2);
    await sleep(3000); // well past the read and INDEX_WAIT_MS
    const after = await get(gw.port, '/target');
    expect(after.status).toBe(200);
    expect(after.body.toString()).toBe('v2'.padEnd(100, '.'));
  }, 60_000);

  it('control: the same DELETE without a worker death invalidates the stored copy', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gwindex-inv-'));
    onTeardown(() => import('node:fs/promises').then((f) => f.rm(dir, { recursive: true, force: true })));
    let version = 1;
    const up = await origin((req, res) => {
      if (req.method === 'DELETE') {
        version++;
        res.writeHead(204).end();
        return;
      }
      res.writeHead(200, { 'cache-control': 'max-age=3600' }).end(`v${version}`.padEnd(100, '.'));
    });
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${up}`, '--cache-dir', dir, '--disk-cache', '1GiB', '--mem-object-max', '1']);
    expect((await get(gw.port, '/target')).body.toString()).toBe('v1'.padEnd(100, '.'));
    expect((await get(gw.port, '/target')).body.toString()).toBe('v1'.padEnd(100, '.'));
    expect((await fetch(`http://127.0.0.1:${gw.port}/target`, { method: 'DELETE' })).status).toBe(204);
    expect((await get(gw.port, '/target')).body.toString()).toBe('v2'.padEnd(100, '.'));
  }, 30_000);
});
