// Regression: 304 revalidations rewrite an entry file's trailer (cut to the body, then appended)
// while other answers write the same body from its mapping. The body's bytes never change, so no
// answer may be cut or differ (docs/CACHING.md, "Disk hits from the page cache": only a file
// "cut short, removed or replaced by another program" is let go).

import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { get, metric, origin } from './disk-lib.ts';
import { pattern, sleep, startGateway } from './gateway-lib.ts';

afterAll(runTeardowns);

const BODY = pattern(1024 * 1024 + 4097, 9);

describe('revalidations while answers write from the mapping', () => {
  it('cut no answer', async () => {
    let revalidations = 0;
    const port = await origin((req, res) => {
      // max-age=1: about once a second a request finds it stale and revalidates.
      const head = { 'cache-control': 'max-age=1', etag: '"v1"', 'content-type': 'application/octet-stream', 'x-round': String(revalidations) };
      if (req.headers['if-none-match'] === '"v1"') {
        revalidations++;
        res.writeHead(304, head);
        res.end();
        return;
      }
      res.writeHead(200, { ...head, 'content-length': BODY.length });
      res.end(BODY);
    });
    const dir = await tempDir('gwmap2-revalmap-');
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${port}`, '--cache-dir', dir, '--workers', '1', '--mem-object-max', '0']);
    expect((await get(gw.port, '/obj')).body.equals(BODY)).toBe(true);
    expect((await get(gw.port, '/obj')).body.equals(BODY)).toBe(true);
    // A hit right after the miss may still find the fill being committed (its fsync): ask until
    // one is answered from the disk entry, so mapped.
    for (let i = 0; i < 30 && (await metric(gw.port, 'estuary_gateway_disk_mapped_bytes')) === 0; i++) {
      await get(gw.port, '/obj');
      await sleep(100);
    }
    expect(await metric(gw.port, 'estuary_gateway_disk_mapped_bytes')).toBeGreaterThan(0);

    const agent = new http.Agent({ keepAlive: true, maxSockets: 6 });
    const bad: string[] = [];
    let answers = 0;
    const until = Date.now() + 4000;
    const one = () =>
      new Promise<void>((resolve) => {
        http
          .get({ host: '127.0.0.1', port: gw.port, path: '/obj', agent }, (res) => {
            const parts: Buffer[] = [];
            res.on('data', (d: Buffer) => parts.push(d));
            res.on('close', () => {
              answers++;
              const body = Buffer.concat(parts);
              if (!res.complete || res.statusCode !== 200 || !body.equals(BODY)) bad.push(`${res.statusCode} ${body.length} complete=${res.complete}`);
              resolve();
            });
          })
          .on('error', (e) => {
            bad.push(e.message);
            resolve();
          });
      });
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        while (Date.now() < until) await one();
      }),
    );
    agent.destroy();
    await sleep(100);
    expect(revalidations).toBeGreaterThanOrEqual(3);
    expect(answers).toBeGreaterThan(50);
    expect(bad).toEqual([]);
  }, 30_000);
});
