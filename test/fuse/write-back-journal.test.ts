// `estuary mount` and the write-back journal it finds at start (docs/SEMANTICS.md, "Write-back"):
// a record that cannot be used is one line with its name; a mount without --write-back says
// where acknowledged files wait; a journal kept under another spelling of the store is named.

import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultJournalDir } from '../../fuse/cache-dir.ts';
import { isMounted } from '../../fuse/mount-table.ts';
import { onTeardown, runTeardowns } from '../helpers/cleanup.ts';
import { type S3rverServer, startS3rver } from '../helpers/s3rver.ts';
import { tempDir } from '../helpers/tmp.ts';
import { fuseAvailable, runEstuary, serverEnv, sh } from './mount-helpers.ts';
import { storeClient } from './s3/client.ts';

afterAll(runTeardowns);

const ID = 'mifz3k2a-0b6e3c1e-8f0a-4c1e-9a51-3b2f7d0c9e11';

/** A journal folder under `cacheDir` holding one acknowledged entry for `key`. */
async function journalWith(cacheDir: string, key: string, identity?: object) {
  const dir = join(cacheDir, 'journal');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(join(dir, `${ID}.data`), 'acknowledged\n');
  const record = { version: 1, id: ID, key, size: 13, options: {}, createdMs: Date.now(), seq: 0 };
  await writeFile(join(dir, `${ID}.json`), JSON.stringify(record));
  if (identity) await writeFile(join(dir, 'identity'), JSON.stringify(identity));
  return dir;
}

function start(server: S3rverServer, source: string, extra: readonly string[], env: NodeJS.ProcessEnv = {}) {
  return tempDir('estuary-wbj-mnt-').then((dir) => {
    const child = runEstuary(['mount', source, dir, '--endpoint', server.endpoint, '--log-format', 'json', ...extra], {
      ...serverEnv(server),
      ...env,
    });
    onTeardown(async () => {
      if (await isMounted(dir)) await sh(`fusermount -uz '${dir}'`);
      await child.stop('SIGKILL');
    });
    return { dir, child };
  });
}

describe.runIf(fuseAvailable().ok)('estuary mount and the write-back journal it finds', () => {
  let server: S3rverServer;
  beforeAll(async () => {
    server = await startS3rver({ buckets: ['kek'] });
  }, 30_000);

  it('refuses a damaged record in one line naming it, exit 2, and keeps it', async () => {
    const cache = await tempDir('estuary-wbj-cache-');
    const dir = await journalWith(cache, 'a.txt');
    await writeFile(join(dir, `${ID}.json`), '{"version":1,"id":"trunc');
    const m = await start(server, 'kek', ['--cache-dir', cache, '--write-back']);
    const code = await m.child.exited;
    const lines = m.child.output().trim().split('\n');
    expect(code, m.child.output()).toBe(2);
    expect(lines.at(-1)).toContain(join(dir, `${ID}.json`));
    expect(lines.at(-1)).toMatch(/^estuary: cannot use the write-back journal record .*not a complete record.*move it and its .data file out/);
    expect(await readFile(join(dir, `${ID}.data`), 'utf8')).toBe('acknowledged\n');
    expect(m.child.output()).not.toMatch(/\n\s+at /);
  }, 30_000);

  it('without --write-back, logs where acknowledged files wait and how many', async () => {
    const cache = await tempDir('estuary-wbj-cache-');
    const dir = await journalWith(cache, 'left.txt');
    const m = await start(server, 'kek', ['--cache-dir', cache]);
    await m.child.waitFor(/"msg":"mounted /, 30_000);
    await sh(`fusermount -u '${m.dir}'`);
    await m.child.stop('SIGTERM', 15_000);
    const warning = m.child.output().split('\n').find((l) => l.includes('ESTUARY_FS_JOURNAL_LEFT'));
    expect(warning, m.child.output()).toBeDefined();
    expect(JSON.parse(warning!)).toMatchObject({ level: 40, journal: dir, files: 1 });
  }, 30_000);

  it('names the journal a release that hashed the prefix as typed kept, and uploads it from there', async () => {
    const xdg = await tempDir('estuary-wbj-xdg-');
    const typed = { endpoint: server.endpoint, bucket: 'kek', prefix: 'run42/' };
    const saved = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = xdg;
    const old = defaultJournalDir(typed);
    if (saved === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = saved;
    await mkdir(old, { recursive: true, mode: 0o700 });
    await journalWith(old, 'run42/old-spelling.txt', typed);
    // Spelled as before, the store now has its folder under the spelling `kek/run42`.
    const a = await start(server, 'kek/run42/', ['--write-back'], { XDG_CACHE_HOME: xdg });
    await a.child.waitFor(/"msg":"mounted /, 30_000);
    await sh(`fusermount -u '${a.dir}'`);
    await a.child.stop('SIGTERM', 15_000);
    expect(a.child.output()).toContain(`--cache-dir ${old} to upload them`);

    const b = await start(server, 'kek/run42', ['--write-back', '--cache-dir', old]);
    await b.child.waitFor(/"msg":"mounted /, 30_000);
    await sh(`fusermount -u '${b.dir}'`);
    expect(await b.child.stop('SIGTERM', 30_000), b.child.output()).toBe(0);
    expect((await storeClient(server, 'kek').get('run42/old-spelling.txt')).toString()).toBe('acknowledged\n');
  }, 60_000);
});
