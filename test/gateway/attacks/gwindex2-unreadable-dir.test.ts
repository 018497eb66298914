// Attack: one of the cache's 256 sub-directories cannot be read (EACCES: the gateway runs as a
// service user, and an administrator's tool left a directory it made with mode 000; EIO from a
// failing disk takes the same path) when a worker is replaced, or when the gateway starts.
//
// Expected (docs/CACHING.md: "anything that is not a valid entry is skipped or deleted, never
// indexed"; the brief of the read: "the read must finish, skip the bad ones"): the read skips
// that directory with a warning and indexes every other entry, so the objects elsewhere stay
// hits; start-up does the same instead of failing. Today the read gives up at the first
// unreadable directory: the replacement serves with an empty index ("cannot read the cache
// index; serving without it"), every stored object is fetched again and stored twice, and the
// old files are never counted against --disk-cache again.

import { chmodSync, chownSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { freePort, sleep } from './gateway-lib.ts';
import { adminPost, bodyOf, entryFiles, get, killWorker, pathOrigin, readMeta, seedCache, sha, until } from './gwindex2-lib.ts';

afterAll(runTeardowns);

const ESTUARY = join(import.meta.dirname, '..', '..', '..', 'bin', 'estuary.js');
const NOBODY = 65534;
const N = 3000;
const TOKEN = 'attack-token-0123456789';

async function purge(port: number, prefix: string): Promise<{ purged: number; unreadable: string[] }> {
  const answer = (await adminPost(port, TOKEN, 'purge', { prefix })) as { purged?: number; unreadable?: string[] };
  return { purged: Number(answer.purged ?? -1), unreadable: answer.unreadable ?? [] };
}

async function startAsNobody(args: string[]) {
  const port = await freePort();
  const child = startChild(NODE, [ESTUARY, 'gateway', '--listen', `127.0.0.1:${port}`, '--log-format', 'json', ...args], {
    uid: NOBODY,
    gid: NOBODY,
    env: { ...process.env, HOME: '/tmp' },
  });
  await child.waitFor(/gateway listening/, 30_000);
  return { child, port };
}

/** A seeded cache owned by the service user, with one sub-directory made unreadable. */
async function setup() {
  const dir = await tempDir('gwi2-eacces-');
  const o = await pathOrigin();
  await seedCache(dir, o, N);
  execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, dir]);
  chmodSync(dir, 0o755);
  const byPath = new Map(entryFiles(dir).map((f) => [readMeta(f).url.replace(/^[a-z]+:\/\/[^/]+/, ''), f]));
  const badSub = dirname(byPath.get('/o/0')!);
  const elsewhere = [...byPath].filter(([p, f]) => p.startsWith('/o/') && dirname(f) !== badSub).map(([p]) => p).slice(0, 20);
  return { dir, o, badSub, elsewhere };
}

describe('an unreadable cache sub-directory', () => {
  it('a replacement worker skips it and still serves every other stored object as a hit', async () => {
    const { dir, o, badSub, elsewhere } = await setup();
    const gw = await startAsNobody(['--upstream', `o=http://127.0.0.1:${o.port}`, '--cache-dir', dir]);
    chownSync(badSub, 0, 0);
    chmodSync(badSub, 0o000);
    await killWorker({ child: gw.child, port: gw.port });
    // The read of 3,001 entries is over well within this.
    await sleep(4000);
    expect(gw.child.output()).not.toMatch(/cannot read the cache index/);
    for (const p of elsewhere) {
      const r = await get(gw.port, p);
      expect(sha(r.body)).toBe(sha(bodyOf(p)));
      expect(String(r.headers['cache-status']), p).toMatch(/; hit/);
    }
    expect(elsewhere.every((p) => o.hits.get(p) === undefined)).toBe(true);
    chmodSync(badSub, 0o755);
  }, 60_000);

  it('a purge answered by that replacement removes what it stored before the crash, for good', async () => {
    const { dir, o, badSub, elsewhere } = await setup();
    const args = ['--upstream', `o=http://127.0.0.1:${o.port}`, '--cache-dir', dir, '--admin-token', TOKEN];
    const gw = await startAsNobody(args);
    chownSync(badSub, 0, 0);
    chmodSync(badSub, 0o000);
    await killWorker({ child: gw.child, port: gw.port });
    await sleep(1500);
    const answer = await purge(gw.port, '/o/');
    // What it could not read it could not purge: the answer says so (docs/CACHING.md).
    expect(answer.unreadable).toEqual([badSub]);
    const purged = answer.purged;
    // The disk error is gone by the next start; what the purge answered must still hold then.
    chmodSync(badSub, 0o755);
    chownSync(badSub, NOBODY, NOBODY);
    await gw.child.stop();
    const again = await startAsNobody(args);
    const back: string[] = [];
    for (const p of elsewhere) {
      const r = await get(again.port, p);
      if (String(r.headers['cache-status']).includes('; hit')) back.push(p);
    }
    expect({ purged: purged >= N - 100, back }).toEqual({ purged: true, back: [] });
  }, 60_000);

  it('start-up skips it and serves every other stored object as a hit', async () => {
    const { dir, o, badSub, elsewhere } = await setup();
    chownSync(badSub, 0, 0);
    chmodSync(badSub, 0o000);
    let gw: Awaited<ReturnType<typeof startAsNobody>> | undefined;
    let failure = '';
    try {
      gw = await startAsNobody(['--upstream', `o=http://127.0.0.1:${o.port}`, '--cache-dir', dir]);
    } catch (err) {
      failure = String(err).slice(0, 600);
    }
    expect(failure).toBe('');
    expect(await until(async () => (await get(gw!.port, elsewhere[0]!)).status === 200, 5000)).toBe(true);
    for (const p of elsewhere) {
      const r = await get(gw!.port, p);
      expect(String(r.headers['cache-status']), p).toMatch(/; hit/);
    }
    chmodSync(badSub, 0o755);
  }, 60_000);
});
