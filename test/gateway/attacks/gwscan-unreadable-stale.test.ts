// Attack on what the gateway reports of cache directories it could not read. docs/CACHING.md:
// a sub-directory that cannot be read "is skipped, not deleted ... what it holds is neither
// served, counted nor purged until it can be read (give the gateway's user read access, or
// remove it)", and the purge answer's message says: "give the gateway's user read access to them
// (or remove them) and purge again". The list is taken once, by the index read at start-up, and
// never again: after the user does what the message says, every later purge still lists the
// directory, still removes nothing in it, and its entries are never served from the cache.
// The gateway runs as nobody here, since root reads every directory whatever its mode.

import { afterAll, describe, expect, it } from 'vitest';
import { chmodSync, chownSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { freePort } from './gateway-lib.ts';
import { adminPost, entryFiles, get, pathOrigin, readMeta, seedCache } from './gwindex2-lib.ts';

afterAll(runTeardowns);

const TOKEN = 'gwscan-attack-token-0123456789abcdef';
const ESTUARY = join(import.meta.dirname, '..', '..', '..', 'bin', 'estuary.js');
const NOBODY = 65534;

type Purge = { purged: number; unreadable?: string[]; message?: string };

describe('purge answer after an unreadable cache directory becomes readable', () => {
  it('"give read access and purge again" works: the second purge removes its entries and lists nothing', async () => {
    const o = await pathOrigin();
    const cacheDir = await tempDir('gwscan-stale-');
    await seedCache(cacheDir, o, 8);
    const byUrl = new Map(entryFiles(cacheDir).map((f) => [new URL(readMeta(f).url).pathname, f]));
    const victim = byUrl.get('/o/0')!;
    const dir = dirname(victim);
    const inDir = [...byUrl.values()].filter((f) => dirname(f) === dir).length;
    chmodSync(cacheDir, 0o755);
    execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, cacheDir]);
    chmodSync(dir, 0o000);

    const port = await freePort();
    const child = startChild('setpriv', [
      `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', NODE, ESTUARY, 'gateway',
      '--listen', `127.0.0.1:${port}`, '--log-format', 'json', '--upstream', `o=http://127.0.0.1:${o.port}`,
      '--cache-dir', cacheDir, '--admin-token', TOKEN,
    ]);
    await child.waitFor(/gateway listening/, 30_000);

    const first = (await adminPost(port, TOKEN, 'purge', { prefix: '/o/nothing-here' })) as Purge;
    expect(first.unreadable).toEqual([dir]);

    // The user does what the message says.
    chmodSync(dir, 0o755);
    chownSync(dir, NOBODY, NOBODY);
    const second = (await adminPost(port, TOKEN, 'purge', { prefix: '/o/' })) as Purge;
    // Expected: nothing left unread, so no `unreadable` nor `message`; the entries of the
    // directory now readable are purged too (8 in all), and /o/0's file is gone.
    expect(second.unreadable).toBeUndefined();
    expect(second.message).toBeUndefined();
    expect(second.purged).toBe(8);
    expect(existsSync(victim)).toBe(false);
    expect(inDir).toBeGreaterThan(0);
    expect((await get(port, '/o/0')).status).toBe(200);
    await child.stop();
  }, 40_000);
});
