// The disk tier on a real directory: commit, byte-bounded LRU eviction, reopen after restart,
// metadata updates, and files with a damaged trailer discarded instead of served.

import { mkdir, readdir, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DiskStore } from '../../../gateway/cache/disk-store.ts';
import { MARK_TTL_MS, readWrites, recordWrites } from '../../../gateway/cache/write-marks.ts';
import type { EntryMeta } from '../../../gateway/cache/entry.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { silent } from '../helpers/gateway.ts';

function meta(key: string, size: number, t = Date.now()): EntryMeta {
  return {
    key,
    url: `http://h/${key}`,
    status: 200,
    headers: { 'cache-control': 'max-age=60' },
    requestTime: t,
    responseTime: t,
    size,
  };
}

async function put(store: DiskStore, key: string, size: number, t?: number) {
  const temp = await store.createTemp();
  await temp.fh.write(Buffer.alloc(size, key.charCodeAt(0)), 0, size, 0);
  return store.commit(temp, meta(key, size, t));
}

describe('DiskStore', () => {
  it('evicts least recently used entries beyond its byte bound and removes their files', async () => {
    const dir = await tempDir();
    const store = new DiskStore(dir, 3000, silent);
    await store.open();
    const a = await put(store, 'a', 1000);
    await put(store, 'b', 1000);
    await put(store, 'c', 1000);
    store.get('a');
    await put(store, 'd', 1000);
    expect(store.get('b')).toBeUndefined();
    expect(store.get('a')?.path).toBe(a.path);
    expect(store.bytes).toBe(3000);
    await new Promise((r) => setTimeout(r, 50));
    const files = (await readdir(join(dir, 'v1'), { recursive: true })).filter((f) =>
      /^[0-9a-f]{2}\/[0-9a-f]{32}$/.test(String(f)),
    );
    expect(files.length).toBe(3);
  });

  it('rebuilds its index after a restart and drops files whose trailer is damaged', async () => {
    const dir = await tempDir();
    const first = new DiskStore(dir, 1e9, silent);
    await first.open();
    await put(first, 'x', 10, 1);
    const y = await put(first, 'y', 20, 2);
    const z = await put(first, 'z', 30, 3);
    await first.updateMeta(z, { ...z.meta, headers: { etag: '"new"' } });
    await truncate(y.path, (await stat(y.path)).size - 1);
    const second = new DiskStore(dir, 1e9, silent);
    const opened = await second.open();
    expect(opened).toEqual({ entries: 2, bytes: 40, discarded: 1 });
    expect(second.get('x')?.meta.size).toBe(10);
    expect(second.get('y')).toBeUndefined();
    expect(second.get('z')?.meta.headers).toEqual({ etag: '"new"' });
  });

  it('a restart drops entries fetched before a write recorded on disk, and keeps later ones', async () => {
    const dir = await tempDir();
    const first = new DiskStore(dir, 1e9, silent);
    await first.open();
    const t = Date.now();
    const old = await put(first, 'old', 10, t - 2000);
    await put(first, 'new', 10, t);
    await put(first, 'other', 10, t - 2000);
    await recordWrites(first.root, ['old', 'new'], t - 1000);
    const second = new DiskStore(dir, 1e9, silent);
    expect(await second.open()).toEqual({ entries: 2, bytes: 20, discarded: 0 });
    expect(second.get('old')).toBeUndefined();
    expect(second.get('new')).toBeDefined();
    expect(second.get('other')).toBeDefined();
    await expect(stat(old.path)).rejects.toThrow();
  });

  it('forgets write records older than their lifetime', async () => {
    const dir = await tempDir();
    const store = new DiskStore(dir, 1e9, silent);
    await store.open();
    const now = Date.now();
    await recordWrites(store.root, ['young'], now - 1000);
    await recordWrites(store.root, ['aged'], now - MARK_TTL_MS - 1000);
    expect([...(await readWrites(store.root, now)).keys()]).toEqual(['young']);
    expect((await readdir(join(store.root, 'written'))).length).toBe(1);
  });

  it('records a write of many keys in one file, and still reads a record of one key per file', async () => {
    const dir = await tempDir();
    const store = new DiskStore(dir, 1e9, silent);
    await store.open();
    const now = Date.now();
    const keys = Array.from({ length: 5000 }, (_, i) => `/cvmfs/repo/data/${i}`);
    await recordWrites(store.root, keys, now - 2000);
    await recordWrites(store.root, ['/cvmfs/repo/data/7'], now - 1000);
    expect((await readdir(join(store.root, 'written'))).length).toBe(2);
    await writeFile(join(store.root, 'written', 'a'.repeat(64)), JSON.stringify({ key: 'single', at: now - 500 }));
    const marks = await readWrites(store.root, now);
    expect(marks.size).toBe(5001);
    expect(marks.get('/cvmfs/repo/data/0')).toBe(now - 2000);
    expect(marks.get('/cvmfs/repo/data/7')).toBe(now - 1000);
    expect(marks.get('single')).toBe(now - 500);
  });

  it('removes a record that is not one', async () => {
    const dir = await tempDir();
    const store = new DiskStore(dir, 1e9, silent);
    await store.open();
    await mkdir(join(store.root, 'written'), { recursive: true });
    await writeFile(join(store.root, 'written', 'junk'), '{"at": 1, "keys": [1, 2]}');
    expect((await readWrites(store.root, Date.now())).size).toBe(0);
    expect(await readdir(join(store.root, 'written'))).toEqual([]);
  });

  it('replaces an entry without touching the file a reader still holds', async () => {
    const dir = await tempDir();
    const store = new DiskStore(dir, 1e9, silent);
    await store.open();
    const old = await put(store, 'k', 5);
    const fresh = await put(store, 'k', 7);
    expect(fresh.path).not.toBe(old.path);
    expect(store.get('k')?.meta.size).toBe(7);
    expect(store.count).toBe(1);
  });
});
