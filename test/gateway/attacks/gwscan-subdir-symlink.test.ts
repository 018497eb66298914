// Attack: a symbolic link named like a cache sub-directory (v1/<xx>) pointing at a directory
// outside the cache. docs/CACHING.md: "Something other than a directory named like `v1/<xx>`
// (a file, a dangling symlink) ... is skipped with a warning and left alone". The index read
// lists through the link and deletes every file there without an entry trailer: a link made by
// mistake (or by another user who can write the cache directory) costs the files of any
// directory the gateway's user may write.

import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { sleep, startGateway } from './gateway-lib.ts';
import { get, pathOrigin, seedCache } from './gwindex2-lib.ts';

afterAll(runTeardowns);

describe('a link named like a cache sub-directory', () => {
  it('is skipped with a warning; the files of the directory it points at are left alone', async () => {
    const o = await pathOrigin();
    const cacheDir = await tempDir('gwscan-subln-');
    const outside = await tempDir('gwscan-precious-');
    await seedCache(cacheDir, o, 2);
    const files = ['thesis.tex', 'results.csv', 'notes.txt'];
    for (const f of files) writeFileSync(join(outside, f), `the user's ${f}, not a cache entry\n`);
    const used = new Set(readdirSync(join(cacheDir, 'v1')));
    const name = [...Array(256).keys()].map((i) => i.toString(16).padStart(2, '0')).find((n) => !used.has(n))!;
    const link = join(cacheDir, 'v1', name);
    symlinkSync(outside, link);

    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${o.port}`, '--cache-dir', cacheDir]);
    expect((await get(gw.port, '/o/1')).status).toBe(200);
    await sleep(1000);
    // Expected: nothing outside the cache directory is deleted, and the log names the link.
    for (const f of files) expect(existsSync(join(outside, f)), f).toBe(true);
    expect(gw.child.output()).toContain(link);
    await gw.child.stop();
  }, 40_000);
});
