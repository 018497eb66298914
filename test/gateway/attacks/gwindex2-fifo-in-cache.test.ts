// Attack: something named like an entry file but not a regular file — a FIFO (mkfifo by a
// confused script, or by a second user where the cache directory is shared) — sits in one of the
// cache's sub-directories when a worker is replaced, or when the gateway starts.
//
// Expected (docs/CACHING.md: anything that is not a valid entry "is skipped or deleted, never
// indexed"): the read skips it and finishes; stored objects are hits once it is over, and a purge
// (which waits for the read) is answered.

import { execFileSync } from 'node:child_process';
import { closeSync, constants as fsc, mkdirSync, openSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { freePort, sleep, startGateway } from './gateway-lib.ts';
import { adminPost, bodyOf, get, killWorker, pathOrigin, seedCache, sha } from './gwindex2-lib.ts';

afterAll(runTeardowns);

const N = 2000;
const TOKEN = 'attack-token-0123456789';

/**
 * Makes a FIFO, and a teardown (run before the gateway is stopped) that lets whoever is stuck
 * opening it go on: a process blocked in open() there keeps the test's pipes open otherwise.
 */
function fifo(path: string, exists = false): void {
  if (!exists) {
    // The seeded names are random: their shard directory may not have been made.
    mkdirSync(dirname(path), { recursive: true });
    execFileSync('mkfifo', [path]);
  }
  onTeardown(() => {
    for (let i = 0; i < 50; i++) {
      try {
        closeSync(openSync(path, fsc.O_WRONLY | fsc.O_NONBLOCK));
      } catch {
        return; // ENXIO: nobody is reading; ENOENT: it was removed
      }
    }
  });
}

describe('a FIFO among the entry files', () => {
  it('a replacement skips it: its read ends, stored objects are hits, a purge is answered', async () => {
    const dir = await tempDir('gwi2-fifo-');
    const o = await pathOrigin();
    await seedCache(dir, o, N);
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${o.port}`, '--cache-dir', dir, '--admin-token', TOKEN]);
    fifo(join(dir, 'v1', '00', 'ab'.repeat(16)));
    await killWorker(gw);
    await sleep(3000); // a read of 2,001 entries is long over
    const r = await get(gw.port, '/o/7');
    expect(sha(r.body)).toBe(sha(bodyOf('/o/7')));
    expect(String(r.headers['cache-status'])).toMatch(/; hit/);
    const purged = await Promise.race([
      adminPost(gw.port, TOKEN, 'purge', { prefix: '/o/' }).then((j) => (j as { purged: number }).purged),
      sleep(10_000).then(() => 'no answer in 10 s'),
    ]);
    expect(purged).toBe(N);
  }, 60_000);

  it('start-up skips it and listens', async () => {
    const dir = await tempDir('gwi2-fifo-start-');
    const o = await pathOrigin();
    await seedCache(dir, o, N);
    const path = join(dir, 'v1', '00', 'cd'.repeat(16));
    mkdirSync(dirname(path), { recursive: true });
    execFileSync('mkfifo', [path]);
    const port = await freePort();
    let failure = '';
    try {
      // The FIFO's teardown must run before the gateway's: with a port given, the gateway is
      // started (and its teardown registered) within this call.
      const starting = startGateway(['--upstream', `o=http://127.0.0.1:${o.port}`, '--cache-dir', dir], port);
      fifo(path, true);
      const gw = await starting;
      const r = await get(gw.port, '/o/7');
      expect(String(r.headers['cache-status'])).toMatch(/; hit/);
    } catch (err) {
      failure = String(err).slice(0, 300);
    }
    expect(failure).toBe('');
  }, 60_000);
});
