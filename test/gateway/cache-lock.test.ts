// One gateway per cache directory, with real `estuary gateway` processes: a second one started on
// the same --cache-dir exits 2 naming the holder and leaves its fills alone; after kill -9 of the
// holder the next start succeeds at once.

import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE, startChild } from '../helpers/process.ts';
import { tempDir } from '../helpers/tmp.ts';
import { send } from './helpers/client.ts';
import { startGatewayProcess } from './helpers/gateway.ts';
import { fixed, slow, startOrigin } from './helpers/origin.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

function startSecond(cacheDir: string) {
  return startChild(NODE, ['bin/estuary.js', 'gateway', '--listen', '127.0.0.1:0', '--cache-dir', cacheDir], {
    cwd: ROOT,
  });
}

/** The exit status, or a failure after 15 s: a second gateway that starts runs until killed. */
async function exitStatus(child: ReturnType<typeof startSecond>): Promise<number | null> {
  const late = new Promise<string>((r) => setTimeout(() => r('still running after 15 s'), 15_000).unref());
  return (await Promise.race([child.exited, late])) as number | null;
}

async function waitForTempFile(dir: string): Promise<void> {
  for (let i = 0; i < 250; i++) {
    if ((await readdir(dir).catch(() => [])).length > 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no fill appeared in ${dir}`);
}

describe('cache directory lock', async () => {
  const origin = await startOrigin();
  // 12 MiB streamed over about 1.5 s: the second gateway starts while the fill is on disk.
  const big = Buffer.alloc(12 * 2 ** 20, 7);
  origin.route('/big', slow(big, 256 * 1024, 30, { 'cache-control': 'max-age=3600' }));
  origin.route('/small', fixed('small', { 'cache-control': 'max-age=3600' }));

  it('refuses a second gateway, which leaves the first one\'s fill whole', async () => {
    const cacheDir = await tempDir('estuary-gw-lock-');
    const first = await startGatewayProcess(['--cache-dir', cacheDir, '--upstream', `o=${origin.url}`]);
    const fill = send(first.url, '/big');
    await waitForTempFile(join(cacheDir, 'v1', 'tmp'));

    const second = startSecond(cacheDir);
    const started = Date.now();
    expect(await exitStatus(second)).toBe(2);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(second.output()).toBe(
      `estuary: cache directory ${cacheDir} is in use by another gateway (PID ${first.child.pid}); ` +
        'stop that gateway first, or give this one its own --cache-dir\n',
    );

    const reply = await fill;
    expect(reply.complete).toBe(true);
    expect(reply.body.length).toBe(big.length);
    expect(reply.body.equals(big)).toBe(true);
    expect((await send(first.url, '/big')).headers['cache-status']).toMatch(/hit/);
    expect(first.child.output()).not.toMatch(/ENOENT/);
  });

  it('is held by the primary of a multi-worker gateway and freed by kill -9', async () => {
    const cacheDir = await tempDir('estuary-gw-lock-');
    const args = ['--cache-dir', cacheDir, '--upstream', `o=${origin.url}`];
    const first = await startGatewayProcess([...args, '--workers', '2']);
    expect((await send(first.url, '/small')).status).toBe(200);

    const second = startSecond(cacheDir);
    expect(await exitStatus(second)).toBe(2);
    expect(second.output()).toContain(`in use by another gateway (PID ${first.child.pid})`);

    // kill -9 leaves the PID file behind, but the kernel has dropped the lock with the process.
    await first.child.stop('SIGKILL');
    const third = await startGatewayProcess(args);
    expect((await send(third.url, '/small')).body.toString()).toBe('small');
  });
});
