import { describe, expect, it } from 'vitest';
import type { EntryMeta } from '../../../gateway/cache/entry.ts';
import type { DiskEntry } from '../../../gateway/cache/disk-types.ts';
import { footprintOf } from '../../../gateway/cache/format.ts';
import { mergeFound } from '../../../gateway/cache/index-merge.ts';

const entry = (key: string, path: string, responseTime: number): DiskEntry & { footprint: ReturnType<typeof footprintOf> } => {
  const meta = { key, responseTime } as unknown as EntryMeta;
  return { meta, path, footprint: { fileBytes: 1, indexBytes: 1 } as ReturnType<typeof footprintOf> };
};

function index(start: DiskEntry[], tooLarge = new Set<string>()) {
  const held = new Map(start.map((e) => [e.meta.key, e]));
  const removed: string[] = [];
  return {
    held,
    removed,
    target: {
      oldestFirst: () => [...held.values()],
      drop: (key: string) => void held.delete(key),
      put: (e: DiskEntry) => {
        if (tooLarge.has(e.path)) return false;
        held.delete(e.meta.key); // put makes it the most recent
        held.set(e.meta.key, e);
        return true;
      },
      removeFile: (path: string) => void removed.push(path),
    },
  };
}

describe('mergeFound', () => {
  it('puts what the read found below what was stored since, oldest found first', () => {
    const ix = index([entry('new', '/n', 50)]);
    mergeFound(ix.target, [entry('a', '/a', 1), entry('b', '/b', 2)], () => false);
    expect([...ix.held.keys()]).toEqual(['a', 'b', 'new']);
    expect(ix.removed).toEqual([]);
  });

  it('keeps the newer version of a key and removes the other file, whichever side it is on', () => {
    const ix = index([entry('k', '/since', 20), entry('j', '/j-since', 5)]);
    mergeFound(ix.target, [entry('k', '/found', 10), entry('j', '/j-found', 9)], () => false);
    expect(ix.held.get('k')?.path).toBe('/since');
    expect(ix.held.get('j')?.path).toBe('/j-found');
    expect(ix.removed.sort()).toEqual(['/found', '/j-since']);
  });

  it('leaves a key deleted since the read began deleted, and its found file removed', () => {
    const ix = index([]);
    mergeFound(ix.target, [entry('gone', '/g', 3)], (key) => key === 'gone');
    expect(ix.held.size).toBe(0);
    expect(ix.removed).toEqual(['/g']);
  });

  it('does not remove a file found again that the index already holds', () => {
    const ix = index([entry('k', '/same', 4)]);
    mergeFound(ix.target, [entry('k', '/same', 4)], () => false);
    expect(ix.held.get('k')?.path).toBe('/same');
    expect(ix.removed).toEqual([]);
  });

  it('removes the file of a found entry larger than the whole tier', () => {
    const ix = index([], new Set(['/huge']));
    mergeFound(ix.target, [entry('h', '/huge', 1)], () => false);
    expect(ix.held.size).toBe(0);
    expect(ix.removed).toEqual(['/huge']);
  });
});
