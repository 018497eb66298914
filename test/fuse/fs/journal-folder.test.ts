// The write-back journal's folder and records at start (fuse/fs/journal-folder.ts, journal.ts):
// a folder anyone else had a hand in is refused before anything in it is read, uploaded or
// deleted; a record that cannot be used stops the start with its name; the order of entries
// survives a restart.

import { chmod, lstat, mkdir, readdir, readFile, rename, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BufferPool } from '../../../fuse/fs/buffer-pool.ts';
import { Journal, type JournalIdentity } from '../../../fuse/fs/journal.ts';
import { entriesLeft } from '../../../fuse/fs/journal-folder.ts';
import { MemoryBudget } from '../../../fuse/fs/memory-budget.ts';
import type { StagingFile } from '../../../fuse/fs/staging-file.ts';
import { FaultInjectingClient } from '../../../fuse/s3/fault-client.ts';
import { MemoryObjectClient } from '../../../fuse/s3/memory-client.ts';
import type { ObjectClient } from '../../../fuse/s3/object-client.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);

const quiet = { error() {}, warn() {}, info() {}, debug() {} };
const ID = 'mifz3k2a-0b6e3c1e-8f0a-4c1e-9a51-3b2f7d0c9e11';
const mine: JournalIdentity = { endpoint: 'http://127.0.0.1:9', bucket: 'kek', prefix: 'mine' };

function journalOn(dir: string, client: ObjectClient = new MemoryObjectClient(), identity = mine): Journal {
  const pool = new BufferPool(new MemoryBudget(64 * 2 ** 20));
  return new Journal(dir, { client, pool, firstPartSize: 5 * 2 ** 20, maxInFlight: 2 }, quiet, identity);
}

async function closedFile(scratch: string, content: string): Promise<StagingFile> {
  const path = join(scratch, `s-${Math.random().toString(16).slice(2)}`);
  await writeFile(path, content);
  return { size: Buffer.byteLength(content), handOver: (target: string) => rename(path, target) } as unknown as StagingFile;
}

async function refusal(j: Journal): Promise<{ code?: string; exitCode?: number; message: string }> {
  return j.open().then(
    () => ({ message: 'opened' }),
    (err: { code?: string; exitCode?: number; message: string }) => err,
  );
}

/** A journal folder holding one entry with `record` as its record and `data` as its file. */
async function planted(record: object | string, mode = 0o700) {
  const base = await tempDir('estuary-journal-folder-');
  const dir = join(base, 'journal');
  await mkdir(dir, { mode });
  await chmod(dir, mode);
  await writeFile(join(dir, `${ID}.data`), 'abc');
  await writeFile(join(dir, `${ID}.json`), typeof record === 'string' ? record : JSON.stringify(record));
  return { base, dir };
}

const record = (over: object = {}) => ({ version: 1, id: ID, key: 'mine/a.txt', size: 3, options: {}, createdMs: 1, seq: 0, ...over });

describe('the write-back journal folder at start', () => {
  it('makes a new folder private, and its records too', async () => {
    const base = await tempDir('estuary-journal-folder-');
    const scratch = join(base, 'scratch');
    await mkdir(scratch);
    const down = new FaultInjectingClient(new MemoryObjectClient());
    down.fail('*', 'unavailable', Number.POSITIVE_INFINITY);
    const j = journalOn(join(base, 'journal'), down);
    await j.open();
    await j.add('mine/a.txt', await closedFile(scratch, 'abc'), {});
    j.stop();
    await j.close();
    expect((await stat(join(base, 'journal'))).mode & 0o777).toBe(0o700);
    const [json] = (await readdir(join(base, 'journal'))).filter((n) => n.endsWith('.json') && n !== 'identity');
    expect((await stat(join(base, 'journal', json!))).mode & 0o777).toBe(0o600);
    expect((await stat(join(base, 'journal', json!.replace(/json$/, 'data')))).mode & 0o777).toBe(0o600);
    expect((await stat(join(base, 'journal', 'identity'))).mode & 0o777).toBe(0o600);
    expect(await entriesLeft(join(base, 'journal'))).toBe(1);
  });

  it('tightens a folder of this user that others may only read', async () => {
    const { dir } = await planted(record(), 0o755);
    const j = journalOn(dir);
    await j.open();
    await j.settled();
    await j.close();
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
  });

  const refusedFolders: [string, (base: string, dir: string) => Promise<void>, RegExp][] = [
    ['belongs to another user', async (_, dir) => chownTo(dir, 65534), /belongs to uid 65534, not to this user/],
    ['may be written by its group', async (_, dir) => chmod(dir, 0o770), /other users may write to it/],
    ['lies in a --cache-dir anyone may write that is not sticky', async (base) => chmod(base, 0o777), /any user may write to .*not sticky/],
    ['has an identity file that cannot be read', async (_, dir) => writeFile(join(dir, 'identity'), '{"endpoint":'), /its identity file cannot be read/],
    ['holds files the journal did not write', async (_, dir) => writeFile(join(dir, '2026-11-24.txt'), 'notes\n'), /holds files the journal did not write \(2026-11-24.txt\)/],
  ];
  for (const [what, make, said] of refusedFolders) {
    it(`refuses a journal folder that ${what}, and reads, uploads and deletes nothing in it`, async () => {
      const { base, dir } = await planted(record());
      await writeFile(join(dir, `${ID.replace(/^m/, 'n')}.data`), 'an incomplete entry');
      await make(base, dir);
      const store = new MemoryObjectClient();
      const err = await refusal(journalOn(dir, store));
      expect(err.code, err.message).toBe('ESTUARY_FS_CACHE_DIR');
      expect(err.exitCode).toBe(2);
      expect(err.message).toMatch(said);
      expect(store.objects.size).toBe(0);
      expect((await readdir(dir)).filter((n) => /\.(data|json)$/.test(n))).toHaveLength(3);
    });
  }

  it('refuses a journal that is a symlink, and writes nothing where it points', async () => {
    const base = await tempDir('estuary-journal-folder-');
    const theirs = await tempDir('estuary-journal-theirs-');
    await symlink(theirs, join(base, 'journal'));
    const err = await refusal(journalOn(join(base, 'journal')));
    expect(err.code).toBe('ESTUARY_FS_CACHE_DIR');
    expect(err.message).toMatch(/is a symlink/);
    expect(await readdir(theirs)).toEqual([]);
    expect((await lstat(join(base, 'journal'))).isSymbolicLink()).toBe(true);
  });
});

async function chownTo(path: string, uid: number) {
  const { chown } = await import('node:fs/promises');
  await chown(path, uid, uid);
}

describe('journal records at start', () => {
  const unusable: [string, object | string, RegExp][] = [
    ['a truncated record', '{"version":1,"id":"trunc', /not a complete record/],
    ["a newer release's record", record({ version: 2 }), /format version 2/],
    ["a record of a key outside the mount's prefix", record({ key: 'elsewhere/planted.txt' }), /not under this mount's prefix "mine\/"/],
  ];
  for (const [what, content, said] of unusable) {
    it(`names ${what} in one refusal, and uploads and deletes nothing`, async () => {
      const { dir } = await planted(content);
      const store = new MemoryObjectClient();
      const j = journalOn(dir, store);
      const err = await refusal(j);
      expect(err.code, err.message).toBe('ESTUARY_FS_JOURNAL_RECORD');
      expect(err.exitCode).toBe(2);
      expect(err.message).toContain(join(dir, `${ID}.json`));
      expect(err.message).toMatch(said);
      expect(err.message).not.toContain('\n');
      expect(store.objects.size).toBe(0);
      expect(await readFile(join(dir, `${ID}.data`), 'utf8')).toBe('abc');
      // The lock went with the refusal: once the record is moved away, the journal opens.
      await rename(join(dir, `${ID}.json`), join(dir, '..', 'moved.json'));
      await rename(join(dir, `${ID}.data`), join(dir, '..', 'moved.data'));
      const again = journalOn(dir, store);
      expect(await again.open()).toBe(0);
      await again.close();
    });
  }
});

describe('journal order across restarts', () => {
  it('counts on from the entries a restart found, so a close after it is the newest', async () => {
    const base = await tempDir('estuary-journal-folder-');
    const dir = join(base, 'journal');
    const scratch = join(base, 'scratch');
    await mkdir(scratch);
    const down = new FaultInjectingClient(new MemoryObjectClient());
    down.fail('*', 'unavailable', Number.POSITIVE_INFINITY);
    const first = journalOn(dir, down);
    await first.open();
    for (const c of ['one', 'two', 'three']) await first.add('mine/f', await closedFile(scratch, c), {});
    first.stop();
    const second = journalOn(dir, down);
    expect(await second.open()).toBe(3);
    await second.add('mine/f', await closedFile(scratch, 'four'), {});
    second.stop();
    const store = new MemoryObjectClient();
    const third = journalOn(dir, store);
    await third.open();
    expect(await readFile(third.dataPath(third.pending('mine/f')!.id), 'utf8')).toBe('four');
    await third.settled();
    await third.close();
    expect(store.objects.get('mine/f')?.body.toString()).toBe('four');
  });
});
