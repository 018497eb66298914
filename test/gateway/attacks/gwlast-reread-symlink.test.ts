// Attack: a cache sub-directory the index read could not list is a symbolic link when a purge
// reads it again.
//
// docs/CACHING.md: the index read "never follows or opens symbolic links"; a link named like a
// sub-directory is skipped and left alone, so the read cannot delete files outside the cache.
// Expected: the purge's reread of what could not be read holds to the same rule: a sub-directory
// that is now a symbolic link is skipped (logged), and nothing in the directory it points at is
// opened or deleted. Today the reread lists through the link (readdir follows it) and unlinks
// every trailer-less file of the linked directory: the gateway's user's own files, outside the
// cache.

import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { freePort } from './gateway-lib.ts';
import { adminPost, pathOrigin, seedCache, until } from './gwindex2-lib.ts';

afterAll(runTeardowns);

const ESTUARY = join(import.meta.dirname, '..', '..', '..', 'bin', 'estuary.js');
const NOBODY = 65534;
const TOKEN = 'reread-link-token-0123456789';

describe("a purge's reread of an unreadable sub-directory that is now a symbolic link", () => {
  it('neither follows the link nor deletes the files it points at', async () => {
    const o = await pathOrigin();
    const base = await tempDir();
    chmodSync(base, 0o755);
    const cacheDir = join(base, 'cache');
    await seedCache(cacheDir, o, 40);
    execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, cacheDir]);
    const root = join(cacheDir, 'v1');
    const sub = readdirSync(root).find((s) => /^[0-9a-f]{2}$/.test(s))!;
    chmodSync(join(root, sub), 0o000);

    // The gateway's user's own files, outside the cache.
    const victim = join(base, 'home-data');
    mkdirSync(victim);
    const names = ['thesis.tex', 'results.csv', 'notes.txt'];
    for (const n of names) writeFileSync(join(victim, n), `precious ${n}\n`);
    execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, victim]);

    const port = await freePort();
    const child = startChild(
      NODE,
      [
        ESTUARY, 'gateway', '--listen', `127.0.0.1:${port}`, '--log-format', 'json',
        '--upstream', `o=http://127.0.0.1:${o.port}`, '--cache-dir', cacheDir, '--admin-token', TOKEN,
      ],
      { uid: NOBODY, gid: NOBODY },
    );
    await child.waitFor(/gateway listening/, 30_000);
    expect(await until(() => /cannot read a cache directory/.test(child.output()), 20_000)).toBe(true);

    // The unreadable directory is moved aside and a link takes its name.
    renameSync(join(root, sub), join(base, 'moved-aside'));
    symlinkSync(victim, join(root, sub));

    await adminPost(port, TOKEN, 'purge', { prefix: '/nothing/' });
    const left = names.filter((n) => existsSync(join(victim, n)));
    expect(left).toEqual(names);
    await child.stop();
  }, 40_000);

  it('nor does it for an unreadable entry file that is now a link to a directory', async () => {
    const o = await pathOrigin();
    const base = await tempDir();
    chmodSync(base, 0o755);
    const cacheDir = join(base, 'cache');
    await seedCache(cacheDir, o, 40);
    execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, cacheDir]);
    const root = join(cacheDir, 'v1');
    const sub = readdirSync(root).find((s) => /^[0-9a-f]{2}$/.test(s))!;
    const file = join(root, sub, readdirSync(join(root, sub))[0]!);
    chmodSync(file, 0o000);

    const victim = join(base, 'home-data');
    mkdirSync(victim);
    const names = ['thesis.tex', 'results.csv'];
    for (const n of names) writeFileSync(join(victim, n), `precious ${n}\n`);
    execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, victim]);

    const port = await freePort();
    const child = startChild(
      NODE,
      [
        ESTUARY, 'gateway', '--listen', `127.0.0.1:${port}`, '--log-format', 'json',
        '--upstream', `o=http://127.0.0.1:${o.port}`, '--cache-dir', cacheDir, '--admin-token', TOKEN,
      ],
      { uid: NOBODY, gid: NOBODY },
    );
    await child.waitFor(/gateway listening/, 30_000);
    expect(await until(() => /cannot read cache files/.test(child.output()), 20_000)).toBe(true);

    renameSync(file, join(base, 'moved-aside'));
    symlinkSync(victim, file);

    await adminPost(port, TOKEN, 'purge', { prefix: '/nothing/' });
    expect(names.filter((n) => existsSync(join(victim, n)))).toEqual(names);
    await child.stop();
  }, 40_000);
});
