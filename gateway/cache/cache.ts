// The two tiers behind one lookup, the fills in flight, and purge. Memory holds small hot objects
// (copies of disk entries); disk holds everything stored. A key's fill in flight is found here
// so that concurrent misses join it instead of going upstream again.

import { openEntryFile } from './disk-files.ts';
import { LRUCache } from 'lru-cache';
import { blocksPrefix, type ObjectVersion } from './block.ts';
import type { DiskEntry, DiskStore } from './disk-store.ts';
import { MappedBodies } from './mapped-bodies.ts';
import type { EntryMeta } from './entry.ts';
import { Fill } from './fill.ts';
import { Frequency, MIN_FREQUENCY_WINDOW } from './frequency.ts';
import type { MemoryEntry, MemoryStore } from './memory-store.ts';

export type Found =
  | { readonly tier: 'memory'; readonly meta: EntryMeta; readonly body: Buffer }
  | { readonly tier: 'disk'; readonly meta: EntryMeta; readonly path: string };

/**
 * Fills across worker processes (gateway/cluster/): one process fetches a key, the others follow
 * its temporary file. Absent when the gateway runs as one process.
 */
export interface Coordinator {
  /**
   * 'leader': this process fetches, and the fill's events go to the others; 'join': another does,
   * and its events are mirrored into `fill`. Either way the fill is wired when the answer arrives,
   * not when the caller resumes: the answer's first events may come in the same tick.
   */
  claim(fill: Fill): Promise<'leader' | 'join'>;
  /** Resolves once every other worker has dropped `keys` (or was restarted for not doing so in time). */
  invalidated(keys: readonly string[]): Promise<void>;
}

/**
 * What a remembered key costs: its characters counted at two bytes (an upper bound; ASCII keys are
 * stored at one) and its map slot. A request target may be 16 KiB, so memories of keys that
 * clients choose are capped in these bytes, not only in entries.
 */
function keyBytes(_value: unknown, key: string): number {
  return 64 + 2 * key.length;
}
const MiB = 2 ** 20;

export class Cache {
  readonly memory: MemoryStore;
  readonly disk: DiskStore;
  readonly fills = new Map<string, Fill>();
  /**
   * Keys whose body of unknown length outgrew --max-object-size: later misses pass through at
   * once instead of copying the body to disk again. Forgotten after an hour, as objects change.
   */
  readonly unstorable = new LRUCache<string, true>({ max: 10_000, maxSize: 8 * MiB, sizeCalculation: keyBytes, ttl: 3_600_000 });
  /**
   * Versions of large S3 objects learnt for block reads (gateway/proxy/blocks.ts), dropped with
   * the object's entry, so a write through the gateway is seen by the next ranged read.
   */
  readonly objectVersions = new LRUCache<string, ObjectVersion>({ max: 10_000 });
  /** When keys were last invalidated here (performance.now()), so an answer asked before does not bring them back. */
  readonly #invalidatedAt = new LRUCache<string, number>({
    max: 10_000,
    dispose: (at, _key, reason) => {
      if (reason === 'evict') this.#forgottenBefore = Math.max(this.#forgottenBefore, at);
    },
  });
  /** The latest invalidation time no longer kept per key: any key counts as invalidated then. */
  #forgottenBefore = -1;
  coordinator?: Coordinator;
  /** Requests per key lately, for the memory tier's admission. */
  readonly #frequency = new Frequency(() => Math.max(MIN_FREQUENCY_WINDOW, 10 * this.memory.count));

  /** Disk entries' bodies mapped from the page cache (mapped-bodies.ts). */
  readonly mapped = new MappedBodies();

  constructor(memory: MemoryStore, disk: DiskStore) {
    this.memory = memory;
    this.disk = disk;
    disk.onGone = (path) => this.mapped.drop(path);
  }

  /**
   * Joins the fill for `key` in flight in this process, or in another worker, or starts one this
   * process must drive (`leader`). A new leader should look the key up again: another worker may
   * have stored it while the claim was on its way.
   */
  async claim(key: string): Promise<{ fill: Fill; leader: boolean }> {
    const local = this.joinOrStart(key);
    if (!local.leader || !this.coordinator) return local;
    const role = await this.coordinator.claim(local.fill);
    return { fill: local.fill, leader: role === 'leader' };
  }

  lookup(key: string): Found | undefined {
    const m = this.memory.get(key);
    if (m) return { tier: 'memory', meta: m.meta, body: m.body };
    const d = this.disk.get(key);
    if (d) return { tier: 'disk', meta: d.meta, path: d.path };
    return undefined;
  }

  /** Counts a request for `key`, hit or miss, for the memory tier's admission. */
  touch(key: string): void {
    this.#frequency.touch(key);
  }

  /** Whether a body of `size` bytes for `key` earns a place in memory (memory-store.ts). */
  admits(key: string, size: number): boolean {
    return this.memory.admits(key, size, (k) => this.#frequency.of(k));
  }

  /** Puts a disk entry's body, read whole, in memory too. */
  promote(entry: MemoryEntry): void {
    this.memory.set(entry);
  }

  /**
   * Reads the disk entry for `key` stored at `path` whole and keeps it in memory too. Resolves
   * the copy (still usable for the request at hand if the entry was replaced meanwhile), or
   * undefined when the file is gone.
   */
  async promoteFromDisk(key: string, path: string): Promise<MemoryEntry | undefined> {
    const entry = this.disk.peek(key);
    if (!entry || entry.path !== path) return undefined;
    const body = await this.readBody(entry);
    if (!body) return undefined;
    if (this.disk.peek(key) === entry) this.promote({ meta: entry.meta, body });
    return { meta: entry.meta, body };
  }

  /** Loads a disk entry's body, for promotion of small objects. */
  async readBody(entry: DiskEntry): Promise<Buffer | undefined> {
    try {
      const { fh } = await openEntryFile(entry.path);
      try {
        const buf = Buffer.allocUnsafe(entry.meta.size);
        const { bytesRead } = await fh.read(buf, 0, entry.meta.size, 0);
        return bytesRead === entry.meta.size ? buf : undefined;
      } finally {
        await fh.close();
      }
    } catch {
      return undefined;
    }
  }

  /** The fill for `key` in flight, or a new one the caller must drive (`leader` true). */
  joinOrStart(key: string): { fill: Fill; leader: boolean } {
    const existing = this.fills.get(key);
    if (existing && (existing.state === 'pending' || existing.state === 'streaming')) {
      existing.joined++;
      return { fill: existing, leader: false };
    }
    const fill = new Fill(key);
    this.fills.set(key, fill);
    return { fill, leader: true };
  }

  endFill(fill: Fill): void {
    if (this.fills.get(fill.key) === fill) this.fills.delete(fill.key);
  }

  /**
   * Drops `key` here and in every other worker; resolves once none of them can serve it any
   * more, so the answer to the write that caused it goes out only then.
   */
  async invalidate(key: string): Promise<boolean> {
    return (await this.invalidateAll([key])) > 0;
  }

  /** invalidate() for many keys at once (one message to the other workers); resolves how many were stored here. */
  async invalidateAll(keys: readonly string[]): Promise<number> {
    let removed = 0;
    for (const k of keys) if (this.invalidateHere(k)) removed++;
    if (keys.length > 0) await this.coordinator?.invalidated(keys);
    return removed;
  }

  /**
   * Invalidates in this process only (another worker already told everyone). A fill in flight
   * for the key is overtaken: it still answers the requests that joined it, but is not stored,
   * and the next request starts a fill of its own.
   */
  invalidateHere(key: string): boolean {
    const fill = this.fills.get(key);
    if (fill) {
      fill.overtaken = true;
      this.fills.delete(key);
    }
    this.objectVersions.delete(key);
    this.#invalidatedAt.set(key, performance.now());
    const a = this.memory.delete(key);
    const b = this.disk.delete(key);
    return a || b;
  }

  /**
   * Whether `key` was (or may have been) invalidated here at or after `since` (performance.now()):
   * what an upstream answered to a request sent before a write must not be kept after it.
   */
  invalidatedSince(key: string, since: number): boolean {
    return this.#forgottenBefore >= since || (this.#invalidatedAt.get(key) ?? -1) >= since;
  }

  /** Drops the entry a fill stored only if it is still the one at `path` (the fill was overtaken). */
  dropStored(key: string, path: string): void {
    if (this.disk.peek(key)?.path !== path) return;
    this.memory.delete(key);
    this.disk.delete(key);
  }

  /**
   * Before a purge looks at the index: a replacement worker may still be reading it, and what it
   * has not read yet is stored too; what could not be read may be readable now (the purge's
   * answer asked for that), and a reread already under way is waited for, not passed by.
   */
  async #wholeIndex(): Promise<void> {
    await this.disk.whenRead();
    await this.disk.rereadUnreadable();
  }

  /**
   * Removes the entries stored under `keys`, and with an S3 object's the aligned blocks stored of
   * it (block.ts), whatever their version; resolves how many were removed.
   */
  async purgeKeys(keys: readonly string[]): Promise<number> {
    await this.#wholeIndex();
    const all = new Set(keys);
    for (const key of keys) {
      if (!key.startsWith('s3://')) continue;
      const blocks = blocksPrefix(key);
      for (const k of this.disk.keys()) if (k.startsWith(blocks)) all.add(k);
      for (const k of this.memory.keys()) if (k.startsWith(blocks)) all.add(k);
    }
    return this.invalidateAll([...all]);
  }

  /** Removes every entry whose key starts with `prefix`; resolves how many were removed. */
  async purgePrefix(prefix: string): Promise<number> {
    await this.#wholeIndex();
    const keys = new Set<string>();
    for (const k of this.disk.keys()) if (k.startsWith(prefix)) keys.add(k);
    for (const k of this.memory.keys()) if (k.startsWith(prefix)) keys.add(k);
    for (const k of this.objectVersions.keys()) {
      if (!k.startsWith(prefix)) continue;
      this.objectVersions.delete(k);
      this.#invalidatedAt.set(k, performance.now());
    }
    await this.invalidateAll([...keys]);
    return keys.size;
  }

  *entries(): Generator<EntryMeta> {
    for (const e of this.disk.values()) yield e.meta;
  }
}
