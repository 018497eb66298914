// What the cache holds, kept as running totals: the ranked set against a sorted list, the disk
// store's totals against a walk of its index after every kind of change (store, replace, delete,
// eviction, another worker's adopt and forget, a 304's new metadata), and the status page and
// summary of a gateway holding thousands of entries read without walking the index once.

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DiskStore } from '../../../gateway/cache/disk-store.ts';
import type { EntryMeta } from '../../../gateway/cache/entry.ts';
import { Ranked } from '../../../gateway/cache/ranked.ts';
import { prefixOfUrl } from '../../../gateway/cache/totals.ts';
import { seeded } from '../../../lib/seeded.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { silent, startTestGateway } from '../helpers/gateway.ts';

function meta(key: string, size: number, url: string, repo?: string): EntryMeta {
  return { key, url, status: 200, headers: {}, requestTime: 0, responseTime: 0, size, ...(repo ? { repo } : {}) };
}

/** The totals a walk over every entry gives: what the page and summary computed before. */
function walk(entries: Iterable<{ meta: EntryMeta }>) {
  const repos = new Map<string, number>();
  const prefixes = new Map<string, number>();
  const objects: { url: string; bytes: number; key: string }[] = [];
  for (const { meta: m } of entries) {
    const by = m.repo ? repos : prefixes;
    const name = m.repo ?? prefixOfUrl(m.url);
    by.set(name, (by.get(name) ?? 0) + m.size);
    objects.push({ url: m.url, bytes: m.size, key: m.key });
  }
  const ranked = (m: Map<string, number>) =>
    [...m].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes || (a.name < b.name ? -1 : 1));
  objects.sort((a, b) => b.bytes - a.bytes || (a.key < b.key ? -1 : 1));
  return { repos: ranked(repos), prefixes: ranked(prefixes), largest: objects.map(({ url, bytes }) => ({ url, bytes })) };
}

describe('Ranked', () => {
  it('keeps items largest first through random adds and removes', () => {
    const rnd = seeded(7);
    const r = new Ranked<number>();
    const model = new Map<string, number>();
    for (let i = 0; i < 5000; i++) {
      const id = `k${Math.floor(rnd() * 400)}`;
      if (model.has(id)) {
        expect(r.remove(id, model.get(id)!)).toBe(true);
        model.delete(id);
      } else {
        const v = Math.floor(rnd() * 50);
        r.add(id, v, i);
        model.set(id, v);
      }
      expect(r.remove('absent', 1)).toBe(false);
    }
    const want = [...model].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    expect(r.size).toBe(model.size);
    expect(r.first(12).map((x) => [x.id, x.value])).toEqual(want.slice(0, 12));
    expect(r.first(1e6).length).toBe(model.size);
  });
});

describe('disk store totals', () => {
  it('match a walk of the index after stores, replacements, deletes, evictions, adopts and forgets', async () => {
    const dir = await tempDir();
    // A bound of 60 kB over objects of up to 2 kB: the LRU evicts all along.
    const store = new DiskStore(dir, 60_000, silent);
    await store.open();
    const rnd = seeded(11);
    const pick = (n: number) => Math.floor(rnd() * n);
    const url = (i: number) =>
      pick(4) === 0 ? `s3://bkt/p${i % 7}/deep/k${i}` : `http://h${i % 5}.example/d${i % 3}/f${i}?sig=${i}`;
    for (let step = 0; step < 4000; step++) {
      const k = `key${pick(300)}`;
      const i = Number(k.slice(3));
      const op = pick(10);
      if (op < 5) {
        const repo = i % 4 === 0 ? `repo${i % 3}.org` : undefined;
        store.adopt({ meta: meta(k, pick(2000), url(i), repo), path: join(dir, 'none', `${k}-${step}`) });
      } else if (op === 5) store.delete(k);
      else if (op === 6) store.forget(k);
      else if (op === 7) await store.evictBytes(pick(5000));
      else if (op === 8) {
        const cur = store.peek(k);
        if (cur) store.replaceMeta({ ...cur.meta, requestTime: step });
      } else store.get(k);
    }
    const want = walk(store.values());
    expect(store.totals.objects).toBe(store.count);
    expect(store.totals.repos(100)).toEqual(want.repos);
    expect(store.totals.prefixes(1000)).toEqual(want.prefixes);
    expect(store.totals.largest(5)).toEqual(want.largest.slice(0, 5));
    expect(store.totals.largest(1e6).reduce((n, o) => n + o.bytes, 0)).toBe(want.largest.reduce((n, o) => n + o.bytes, 0));
  });
});

describe('status page and summary cost', () => {
  it('read what they show without walking the cache', async () => {
    const gw = await startTestGateway();
    const disk = gw.cache.disk;
    const N = 20_000;
    for (let i = 0; i < N; i++) {
      const m = meta(`k${i}`, (i * 7919) % 100_000, `http://host${i % 500}.example.org/dir${i % 97}/file${i}`, i % 10 === 0 ? `r${i % 3}.cern.ch` : undefined);
      disk.adopt({ meta: m, path: `/nonexistent/estuary-totals-test/${i}` });
    }
    const want = walk(disk.values());
    // Every way to walk the index, counted: a view must call none of them.
    let walked = 0;
    for (const [obj, name] of [[disk, 'values'], [disk, 'keys'], [gw.cache, 'entries']] as const) {
      const original = (obj as unknown as Record<string, () => Iterable<unknown>>)[name]!.bind(obj);
      (obj as unknown as Record<string, unknown>)[name] = () => {
        walked++;
        return original();
      };
    }
    const page = await (await fetch(`${gw.url}/estuary/v1/status`)).text();
    const summary = (await (await fetch(`${gw.url}/estuary/v1/summary`)).json()) as { cvmfs: { repo: string; bytes: number }[]; prefixes: { prefix: string; bytes: number }[] };
    expect(walked).toBe(0);
    expect(summary.cvmfs).toEqual(want.repos.map((t) => ({ repo: t.name, bytes: t.bytes })));
    expect(summary.prefixes).toEqual(want.prefixes.slice(0, 32).map((t) => ({ prefix: t.name, bytes: t.bytes })));
    expect(page).toContain(want.largest[0]!.url);
    expect(page).toContain(want.prefixes[0]!.name);
  }, 30_000);
});
