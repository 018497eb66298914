// Crash safety with a real `estuary gateway` process: kill -9 in the middle of a fill, restart on
// the same cache directory, and check that nothing partial is ever served while everything that
// was complete survives.

import { createHash } from 'node:crypto';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/tmp.ts';
import { send } from './helpers/client.ts';
import { startGatewayProcess } from './helpers/gateway.ts';
import { fixed, slow, startOrigin } from './helpers/origin.ts';

function dataPath(body: Buffer): string {
  const hex = createHash('sha1').update(body).digest('hex');
  return `/cvmfs/cms.cern.ch/data/${hex.slice(0, 2)}/${hex.slice(2)}`;
}

describe('kill -9 mid-fill, then restart', async () => {
  const origin = await startOrigin();
  const cacheDir = await tempDir('estuary-gw-crash-');
  const args = ['--cache-dir', cacheDir, '--upstream', `cvmfs=${origin.url}`];

  it('serves complete entries after restart and never a partial one', async () => {
    const small = Buffer.from('complete before the crash');
    const smallPath = dataPath(small);
    origin.route(smallPath, fixed(small, { 'cache-control': 'max-age=259200' }));
    const big = Buffer.alloc(16 * 2 ** 20);
    for (let i = 0; i < big.length; i += 4) big.writeUInt32BE((i * 2654435761) >>> 0, i);
    const bigPath = dataPath(big);
    origin.route(bigPath, slow(big, 512 * 1024, 30, { 'cache-control': 'max-age=259200' }));

    const first = await startGatewayProcess(args);
    expect((await send(first.url, smallPath)).body.equals(small)).toBe(true);
    // Start the big fill, and kill the gateway once part of it is on disk.
    const partial = send(first.url, bigPath);
    const tmp = join(cacheDir, 'v1', 'tmp');
    for (let i = 0; i < 100; i++) {
      const files = await readdir(tmp).catch(() => []);
      if (files.length > 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, 200));
    await first.child.stop('SIGKILL');
    const cut = await partial;
    expect(cut.complete).toBe(false);
    expect(cut.body.length).toBeLessThan(big.length);
    expect((await readdir(tmp)).length).toBeGreaterThan(0);

    // Garbage a crash or a bad copy could leave under a servable-looking name.
    await mkdir(join(cacheDir, 'v1', 'ab'), { recursive: true });
    await writeFile(join(cacheDir, 'v1', 'ab', 'abcdef'), 'no trailer here');

    const second = await startGatewayProcess(args);
    expect(await readdir(tmp)).toEqual([]);
    const hit = await send(second.url, smallPath);
    expect(hit.body.equals(small)).toBe(true);
    expect(hit.headers['cache-status']).toMatch(/hit.*detail=disk/);
    expect(origin.count(smallPath)).toBe(1);

    origin.route(bigPath, fixed(big, { 'cache-control': 'max-age=259200' }));
    const again = await send(second.url, bigPath);
    expect(again.headers['cache-status']).toMatch(/fwd=miss/);
    expect(again.body.equals(big)).toBe(true);
    expect(origin.count(bigPath)).toBe(2);
    await second.child.stop('SIGTERM');
    expect(second.child.output()).toMatch(/discarded unreadable cache files/);
  });

  it('refuses an unwritable cache directory with a one-line error and exit status 2', async () => {
    const { startChild, NODE } = await import('../helpers/process.ts');
    const file = join(await tempDir(), 'not-a-dir');
    await writeFile(file, 'x');
    const child = startChild(
      NODE,
      ['bin/estuary.js', 'gateway', '--listen', '127.0.0.1:0', '--cache-dir', join(file, 'sub')],
      {
        cwd: new URL('../../', import.meta.url).pathname,
      },
    );
    expect(await child.exited).toBe(2);
    expect(child.output()).toMatch(/ESTUARY_GW_CACHE_DIR|cache directory .* is not usable/);
    expect(child.output()).not.toMatch(/at .*\.ts:\d+/);
  });
});
