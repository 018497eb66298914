// Attacks on the index read's handling of symbolic links among the entry files. docs/CACHING.md
// ("Where things live"): "something other than a regular file among the entries (a FIFO, a
// device), is skipped with a warning and left alone". A symbolic link is not a regular file, yet
// the read follows it: it serves whatever entry the link points at (a file anywhere on the
// machine), deletes links to files without a trailer, says nothing of a dangling link, and calls a
// link loop a file it "cannot read" (telling the user to grant read access, in every purge).

import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, lstatSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { sleep, startGateway } from './gateway-lib.ts';
import { adminPost, bodyOf, entryFiles, get, pathOrigin, readMeta, seedCache, sha } from './gwindex2-lib.ts';

afterAll(runTeardowns);

const TOKEN = 'gwscan-attack-token-0123456789abcdef';

/** A cache with entries for /o/0 and /o/1 (and /seed); returns the entry file of each path. */
async function seeded(): Promise<{ cacheDir: string; outside: string; o: Awaited<ReturnType<typeof pathOrigin>>; fileOf: (p: string) => string }> {
  const o = await pathOrigin();
  const cacheDir = await tempDir('gwscan-cache-');
  const outside = await tempDir('gwscan-outside-');
  await seedCache(cacheDir, o, 2);
  const byUrl = new Map(entryFiles(cacheDir).map((f) => [new URL(readMeta(f).url).pathname, f]));
  return { cacheDir, outside, o, fileOf: (p) => byUrl.get(p)! };
}

describe('index read: symbolic links among the entry files', () => {
  it('a link to a valid entry file outside the cache is skipped with a warning, and the origin body is served', async () => {
    const { cacheDir, outside, o, fileOf } = await seeded();
    const entry = fileOf('/o/0');
    // The same entry, with another body of the same length, kept outside the cache directory.
    const bytes = readFileSync(entry);
    const forged = Buffer.concat([Buffer.alloc(64, 'E'), bytes.subarray(64)]);
    const target = join(outside, 'forged');
    writeFileSync(target, forged);
    rmSync(entry);
    symlinkSync(target, entry);

    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${o.port}`, '--cache-dir', cacheDir]);
    const r = await get(gw.port, '/o/0');
    // Expected: the link is not an entry; the request goes to the origin and gets its body.
    expect(r.status).toBe(200);
    expect(sha(r.body)).toBe(sha(bodyOf('/o/0')));
    expect(gw.child.output()).toContain(entry);
    await gw.child.stop();
  }, 40_000);

  it('a link to a file without a trailer is left alone (not deleted), with a warning', async () => {
    const { cacheDir, outside, o, fileOf } = await seeded();
    const entry = fileOf('/o/0');
    const target = join(outside, 'notes.txt');
    writeFileSync(target, 'a file of the operator, not an entry\n');
    rmSync(entry);
    symlinkSync(target, entry);

    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${o.port}`, '--cache-dir', cacheDir]);
    await get(gw.port, '/o/1');
    await sleep(1500); // the read of three files is long over
    // Expected: "skipped with a warning and left alone" — the link still exists and is named.
    expect(existsSync(target)).toBe(true);
    expect(lstatSync(entry, { throwIfNoEntry: false })?.isSymbolicLink()).toBe(true);
    expect(gw.child.output()).toContain(entry);
    await gw.child.stop();
  }, 40_000);

  it('a dangling link among the entries is skipped with a warning naming it', async () => {
    const { cacheDir, o, fileOf } = await seeded();
    const link = join(dirname(fileOf('/o/0')), '0123456789abcdef0123456789abcdef');
    symlinkSync('/nonexistent/estuary-gwscan', link);

    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${o.port}`, '--cache-dir', cacheDir]);
    await get(gw.port, '/o/1');
    await sleep(1500); // the read of three files is long over
    // Expected: the same "not a regular file ... skipped (remove it)" warning as a FIFO gets;
    // today the read takes the dangling link for a file deleted meanwhile and says nothing.
    expect(gw.child.output()).toContain(link);
    expect(lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink()).toBe(true);
    await gw.child.stop();
  }, 40_000);

  it('a link loop is not called unreadable (no "give read access" in every purge answer)', async () => {
    const { cacheDir, o, fileOf } = await seeded();
    const dir = dirname(fileOf('/o/0'));
    const a = join(dir, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa');
    const b = join(dir, 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb');
    symlinkSync(b, a);
    symlinkSync(a, b);

    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${o.port}`, '--cache-dir', cacheDir, '--admin-token', TOKEN]);
    const answer = (await adminPost(gw.port, TOKEN, 'purge', { prefix: '/o/' })) as { purged: number; unreadable?: string[]; message?: string };
    // Expected: a loop is something other than a regular file, skipped with a warning; read
    // access would not help, so the purge is a plain success that removed both entries.
    expect(answer.purged).toBe(2);
    expect(answer.unreadable).toBeUndefined();
    expect(answer.message).toBeUndefined();
    await gw.child.stop();
  }, 40_000);
});
