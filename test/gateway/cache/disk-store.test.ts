// The disk tier on a real directory: commit, byte-bounded LRU eviction, reopen after restart,
// metadata updates, files with a damaged trailer discarded instead of served, and what entries
// count against the bound and hold in memory.

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
    // Each entry's file (1000 bytes and its trailer) takes one 4 KiB block.
    const store = new DiskStore(dir, 3 * 4096, silent);
    await store.open();
    const a = await put(store, 'a', 1000);
    await put(store, 'b', 1000);
    await put(store, 'c', 1000);
    store.get('a');
    await put(store, 'd', 1000);
    expect(store.get('b')).toBeUndefined();
    expect(store.get('a')?.path).toBe(a.path);
    expect(store.bytes).toBe(3 * 4096);
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
    expect(opened).toEqual({ entries: 2, bytes: 2 * 4096, discarded: 1 });
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
    expect(await second.open()).toEqual({ entries: 2, bytes: 2 * 4096, discarded: 0 });
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

  it('counts each file whole, trailer and block rounding included, as the disk does', async () => {
    const dir = await tempDir();
    const store = new DiskStore(dir, 1e9, silent);
    await store.open();
    const small = await put(store, 's', 10);
    const edge = await put(store, 'e', 4096 - 10);
    const on = (await stat(small.path)).blocks * 512;
    expect(store.bytes).toBe(4096 + 8192);
    expect(on).toBeLessThanOrEqual(4096);
    expect((await stat(edge.path)).size).toBeGreaterThan(4096);
  });

  it('empty bodies under long URLs cannot make the index outgrow the bound', async () => {
    const dir = await tempDir();
    const bound = 4 * 1024 * 1024;
    const store = new DiskStore(dir, bound, silent);
    await store.open();
    const long = 'x'.repeat(15 * 1024);
    for (let i = 0; i < 200; i++) {
      const temp = await store.createTemp();
      const m = { ...meta(`${long}${i}`, 0), url: `http://h/${long}${i}` };
      await store.commit(temp, m);
    }
    // Each holds about 31 KiB of index memory (two copies of the URL, and the rest): at four times
    // that, a 4 MiB bound keeps at most 33 of them, where counting bodies alone kept all 200.
    expect(store.count).toBeLessThanOrEqual(34);
    expect(store.indexBytes).toBeLessThanOrEqual(bound / 4);
    expect(store.indexBytes).toBeGreaterThan(store.count * 30 * 1024);
  });

  it('keeps its index memory in step through replacement, metadata updates, deletes and a restart', async () => {
    const dir = await tempDir();
    const first = new DiskStore(dir, 1e9, silent);
    await first.open();
    const a = await put(first, 'a', 100);
    await put(first, 'b', 100);
    const two = first.indexBytes;
    expect(two).toBeGreaterThan(2 * 512);
    await put(first, 'b', 200);
    expect(first.indexBytes).toBe(two);
    await first.updateMeta(a, { ...a.meta, headers: { etag: `"${'e'.repeat(5000)}"` } });
    expect(first.indexBytes).toBeGreaterThan(two + 4900);
    // Its 5 KB of headers now weigh more than its file's two blocks: four times its index memory.
    expect(first.bytes).toBeGreaterThan(4096 + 4 * 5000);
    const grown = first.indexBytes;
    const second = new DiskStore(dir, 1e9, silent);
    await second.open();
    expect(second.indexBytes).toBe(grown);
    expect(second.bytes).toBe(first.bytes);
    first.delete('a');
    first.delete('b');
    expect(first.indexBytes).toBe(0);
    expect(first.bytes).toBe(0);
  });
});

describe('DiskStore bodies being written', () => {
  it('reserves announced lengths against the bound, evicting old entries, and refuses what cannot fit', async () => {
    const dir = await tempDir();
    const store = new DiskStore(dir, 4 * 4096, silent);
    await store.open();
    await put(store, 'a', 1000);
    await put(store, 'b', 1000);
    // Larger than the whole bound: never written.
    expect(store.reserve(4 * 4096 + 1)).toBeUndefined();
    const one = store.reserve(3 * 4096);
    expect(one).toBeDefined();
    // The oldest entry made room for it; a second body of that size does not fit beside it.
    expect(store.get('a')).toBeUndefined();
    expect(store.get('b')).toBeDefined();
    expect(store.reserve(2 * 4096)).toBeUndefined();
    one!.release();
    one!.release();
    expect(store.reserve(2 * 4096)).toBeDefined();
  });

  it('a scan that runs while the store is in use keeps the newer entry of a key', async () => {
    const dir = await tempDir();
    const first = new DiskStore(dir, 1 << 20, silent);
    await first.open();
    const old = await put(first, 'k', 10, Date.now() - 60_000);
    const second = new DiskStore(dir, 1 << 20, silent);
    await second.prepare(false);
    // Stored (by a request the replacement served) before its scan reached the key's old file.
    const fresh = await put(second, 'k', 20);
    await second.load();
    expect(second.get('k')?.path).toBe(fresh.path);
    await new Promise((r) => setTimeout(r, 50));
    expect((await stat(fresh.path)).size).toBeGreaterThan(20);
    await expect(stat(old.path)).rejects.toThrow();
  });

  it('while its index is read, a lookup that found nothing can wait for the read, and only then', async () => {
    const dir = await tempDir();
    const first = new DiskStore(dir, 1 << 20, silent);
    await first.open();
    expect(first.indexRead()).toBeUndefined();
    await put(first, 'k', 10);
    const second = new DiskStore(dir, 1 << 20, silent);
    await second.prepare(false);
    const loading = second.load();
    const wait = second.indexRead();
    expect(wait).toBeDefined();
    expect(second.get('k')).toBeUndefined();
    await wait;
    expect(second.get('k')).toBeDefined();
    expect(second.indexRead()).toBeUndefined();
    await loading;
  });

  it('a key deleted while the index is read stays deleted, and its file goes', async () => {
    const dir = await tempDir();
    const first = new DiskStore(dir, 1 << 20, silent);
    await first.open();
    const old = await put(first, 'k', 10, Date.now() - 60_000);
    await put(first, 'other', 10, Date.now() - 60_000);
    const second = new DiskStore(dir, 1 << 20, silent);
    await second.prepare(false);
    const loading = second.load();
    second.delete('k');
    let purgeSawOther = false;
    const purge = second.whenRead().then(() => (purgeSawOther = second.peek('other') !== undefined));
    await loading;
    await purge;
    expect(second.get('k')).toBeUndefined();
    expect(purgeSawOther).toBe(true);
    await new Promise((r) => setTimeout(r, 50));
    await expect(stat(old.path)).rejects.toThrow();
  });

  it('ranks what its read finds below what was stored since, so the bound evicts the oldest found entry', async () => {
    const dir = await tempDir();
    const first = new DiskStore(dir, 1 << 20, silent);
    await first.open();
    const t = Date.now() - 60_000;
    const a = await put(first, 'a', 10, t);
    await put(first, 'b', 10, t + 1);
    await put(first, 'c', 10, t + 2);
    // Room for three entries, one of them stored by the replacement before its read gets going.
    const second = new DiskStore(dir, 3 * 4096, silent);
    await second.prepare(false);
    const fresh = await put(second, 'fresh', 10);
    await second.load();
    expect(second.get('fresh')?.path).toBe(fresh.path);
    expect(second.get('a')).toBeUndefined();
    expect([second.peek('b'), second.peek('c')].every((e) => e !== undefined)).toBe(true);
    expect({ count: second.count, evictions: second.evictions, held: second.held }).toEqual({
      count: 3,
      evictions: 1,
      held: { objects: 3, bytes: 3 * 4096, unread: 0 },
    });
    await new Promise((r) => setTimeout(r, 50));
    await expect(stat(a.path)).rejects.toThrow();
  });

  it('while its index is read, reports count the files on disk, and a full disk evicts what the read found first', async () => {
    const dir = await tempDir();
    const first = new DiskStore(dir, 1 << 20, silent);
    await first.open();
    const t = Date.now() - 60_000;
    const old = [];
    for (let i = 0; i < 50; i++) old.push(await put(first, `o${i}`, 10, t + i));
    const second = new DiskStore(dir, 1 << 20, silent);
    await second.prepare(false);
    const fresh = await put(second, 'fresh', 10);
    const loading = second.load();
    await second.listed();
    // Every file listed counts (the fresh one is also in the index: a file stored before the
    // listing counts twice until the read is over).
    expect(second.held.objects).toBeGreaterThanOrEqual(51);
    expect(second.held.unread).toBeGreaterThan(0);
    // Once part of the files are read, eviction takes the oldest of those, not the fresh entry.
    while (second.held.bytes < 11 * 4096) await new Promise((r) => setImmediate(r));
    expect(second.held.unread).toBeGreaterThan(0);
    expect(await second.evictBytes(4096)).toBe(4096);
    expect(second.peek('fresh')).toBeDefined();
    await loading;
    expect(second.count).toBe(50);
    expect(second.peek('fresh')?.path).toBe(fresh.path);
    expect(second.held).toEqual({ objects: 50, bytes: 50 * 4096, unread: 0 });
  });
});
