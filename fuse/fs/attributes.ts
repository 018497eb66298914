// Lookup and attributes: what a name is (file, directory, symlink, nothing), with which mode, owner,
// size and times, from the entry cache, the open writers, the write-back journal or the bucket;
// and directory listings, including the listing ahead of a tree walker. See "lookup / stat" and
// "readdir" in docs/SEMANTICS.md.

import { S3_LIMITS } from '../s3/object-client.ts';
import { ListingProgress } from '../s3/listing-progress.ts';
import { entriesAfter } from './entry-cache.ts';
import { FsError } from './errno.ts';
import { baseName, entryName, joinPath, NAME_MAX, parentOf, reachableKey, STAND_IN, standInName } from './keys.ts';
import { type Attr, attrFromHead, attrFromListing, implicitDirAttr } from './metadata.ts';
import { FsCore } from './fs-core.ts';
import type { DirEntry } from './fs-types.ts';

/** Subdirectories listed ahead of a walker; see listAhead. */
const LIST_AHEAD = 8;

export class Attributes extends FsCore {
  async getattr(path: string): Promise<Attr> {
    path = this.named(path);
    const attr = await this.lookup(path);
    if (!attr) throw new FsError('ENOENT');
    return this.withDirTimes(path, attr);
  }

  protected async lookup(path: string): Promise<Attr | null> {
    if (path === '/') return implicitDirAttr(this.defaults);
    // Before any cache: a cached listing would answer ENOENT for a name no file can have, and
    // whether one is cached (more often with --write-back) must not change the errno.
    if (Buffer.byteLength(baseName(path)) > NAME_MAX) throw new FsError('ENAMETOOLONG');
    // A name whose key S3 cannot hold exists nowhere: not ENOENT, which would invite a create.
    if (Buffer.byteLength(this.key(path)) > S3_LIMITS.maxKeyBytes) throw new FsError('ENAMETOOLONG');
    const pending = this.writerAttr(path) ?? this.journalAttr(path);
    if (pending) return pending;
    if (this.renamedAway.has(path)) return null;
    let cached = this.cache.get(path);
    if (cached === undefined) {
      const listed = this.cache.listing(parentOf(path));
      if (listed) cached = listed.get(baseName(path)) ?? null;
    }
    if (cached !== undefined && !this.unverified(cached)) return cached;
    let inflight = this.lookups.get(path);
    if (!inflight) {
      inflight = this.lookupRemote(path).finally(() => this.lookups.delete(path));
      this.lookups.set(path, inflight);
    }
    return inflight;
  }

  /** Attributes the kernel must not check permissions on: mode and owner may be defaults. */
  protected unverified(attr: Attr | null): boolean {
    return attr !== null && this.o.checkPermissions === true && attr.fromListing === true;
  }

  /** HEAD the file, HEAD the directory marker and list the prefix, all at once (one round trip). */
  protected async lookupRemote(path: string): Promise<Attr | null> {
    // A stand-in name not seen yet (after a restart, say): its directory's listing defines it.
    if (STAND_IN.test(baseName(path)) && !this.standIns.has(path)) {
      await this.readdir(parentOf(path)).catch(() => undefined);
      // Not a stand-in: a key of that name is shown under a stand-in of its own (see entryName).
      if (!this.standIns.has(path)) return null;
    }
    const key = this.key(path);
    // A stand-in names either an object or a prefix of one key (`a/..`, `a/../`), never both.
    const standIn = this.standIns.get(path);
    const none = Promise.resolve(undefined);
    const [file, marker, children] = await Promise.all([
      standIn?.dir ? none : this.client.head(key),
      standIn && !standIn.dir ? none : this.client.head(`${key}/`),
      standIn && !standIn.dir
        ? { objects: [], prefixes: [] }
        : this.client.list(`${key}/`, { delimiter: '/', maxKeys: 1 }),
    ]);
    let attr: Attr | null = null;
    // A directory shadows an object of the same name (documented in SEMANTICS.md).
    if (marker) attr = attrFromHead(marker, this.defaults, true);
    // No marker: the defaults are the directory's real attributes, not a guess.
    else if (children.objects.length > 0 || children.prefixes.length > 0)
      attr = { ...implicitDirAttr(this.defaults), fromListing: false };
    else if (file) attr = attrFromHead(file, this.defaults, false);
    if (file && attr?.kind === 'dir')
      this.o.log.warn({ key, shownAs: joinPath(parentOf(path), standInName(key)) }, 'an object whose key is also a directory is shown under a stand-in name');
    this.cache.set(path, attr);
    if (attr) this.known.learn(path, attr);
    return attr;
  }

  protected async mustBeDir(path: string): Promise<Attr> {
    const attr = await this.lookup(path);
    if (!attr) throw new FsError('ENOENT');
    if (attr.kind !== 'dir') throw new FsError('ENOTDIR');
    return attr;
  }

  async readdir(path: string): Promise<DirEntry[]> {
    await this.mustBeDir(path);
    let names = this.cache.listing(path) ?? (await this.listingsAhead.get(path));
    if (!names) {
      names = await this.listDir(path);
      this.cacheListing(path, names);
    }
    this.listAhead(path);
    const entries = new Map(names);
    const prefix = this.dirKey(path);
    for (const r of this.journal?.pendingUnder(prefix) ?? []) {
      const name = entryName(prefix, r.key);
      const attr = name === undefined ? undefined : this.journalAttr(joinPath(path, name));
      if (name !== undefined && attr && !r.key.slice(prefix.length).includes('/')) entries.set(name, attr);
    }
    for (const away of this.renamedAway.keys()) if (parentOf(away) === path) entries.delete(baseName(away));
    for (const h of this.handles.values()) {
      if (h.kind === 'write' && !h.unlinked && parentOf(h.path) === path) {
        entries.set(baseName(h.path), { ...h.attr, size: h.size });
      }
    }
    return [...entries].map(([name, attr]) => ({ name, attr: this.withDirTimes(joinPath(path, name), attr) }));
  }

  /**
   * A walker (find, du, ls -R, cp -r, rsync) that has listed one subdirectory lists the next ones
   * of its parent next, one round trip each. So the next LIST_AHEAD subdirectories, in listing
   * order, are listed now, in parallel: one LIST each, kept only when it holds the whole directory
   * and nothing changed through this mount meanwhile. A readdir of one of them waits for that LIST
   * instead of sending its own. What is listed ahead is cached like any listing, for the TTL.
   */
  protected listAhead(path: string): void {
    if (path === '/') return;
    const parent = parentOf(path);
    const siblings = this.cache.listing(parent);
    const self = baseName(path);
    if (siblings?.get(self)?.kind !== 'dir') return;
    let ahead = 0;
    for (const [name, attr] of entriesAfter(siblings, self)) {
      if (attr.kind !== 'dir') continue;
      if (++ahead > LIST_AHEAD) return;
      const dir = joinPath(parent, name);
      if (this.cache.listing(dir) || this.listingsAhead.has(dir)) continue;
      const changes = this.cache.changes;
      const listed = this.listDir(dir, true)
        .then(
          (names) => {
            if (!names || this.cache.changes !== changes) return undefined;
            this.cacheListing(dir, names);
            return names;
          },
          () => undefined,
        )
        .finally(() => this.listingsAhead.delete(dir));
      this.listingsAhead.set(dir, listed);
    }
  }

  /** Caches a directory's listing, and each entry's attributes from it. */
  protected cacheListing(path: string, names: Map<string, Attr>): void {
    for (const [name, attr] of names) {
      const child = joinPath(path, name);
      if (attr.kind === 'dir' && this.cache.get(child)?.kind === 'dir') continue;
      this.cache.set(child, attr);
    }
    this.cache.setListing(path, names);
  }

  /**
   * One directory level from ListObjectsV2: sizes and times for `ls -l` without a HEAD each. With
   * `onePage`, a directory that does not fit one page gives undefined instead of more LISTs.
   */
  protected async listDir(path: string, onePage: true): Promise<Map<string, Attr> | undefined>;

  protected async listDir(path: string): Promise<Map<string, Attr>>;

  protected async listDir(path: string, onePage = false): Promise<Map<string, Attr> | undefined> {
    const prefix = this.dirKey(path);
    const names = new Map<string, Attr>();
    let skipped = 0;
    const nameOf = (key: string): string | undefined => {
      const name = entryName(prefix, key) ?? this.standIn(path, key);
      if (name === undefined) skipped++;
      return name;
    };
    const progress = new ListingProgress(prefix);
    let token: string | undefined;
    do {
      const page = await this.client.list(prefix, { delimiter: '/', continuationToken: token });
      if (onePage && page.nextToken) return undefined;
      // An object whose key is also a prefix (`d` beside `d/x`): the directory keeps the name,
      // the object is shown under a stand-in, so neither hides the other (the naming rule).
      const objects = new Map(page.objects.filter((o) => o.key !== prefix).map((o) => [o.key, o]));
      for (const p of page.prefixes) {
        const name = nameOf(p);
        if (name === undefined) continue;
        const hidden = names.get(name);
        if (hidden && hidden.kind !== 'dir') {
          names.delete(name);
          const stand = this.standIn(path, `${prefix}${name}`);
          if (stand !== undefined) names.set(stand, hidden);
        }
        const known = this.known.dir(joinPath(path, name));
        names.set(name, known ? { ...known, fromListing: true } : implicitDirAttr(this.defaults));
      }
      for (const o of objects.values()) {
        let name = nameOf(o.key);
        if (name !== undefined && names.get(name)?.kind === 'dir') name = this.standIn(path, o.key);
        if (name === undefined) continue;
        // Keep what a HEAD told us (mode, owner, symlink, mtime) while the object is unchanged.
        const known = this.known.object(joinPath(path, name), o.etag);
        names.set(name, known ? { ...known, fromListing: true } : attrFromListing(o, this.defaults));
      }
      token = page.nextToken === undefined ? undefined : progress.next(page.nextToken);
    } while (token);
    if (skipped > 0) this.o.log.debug({ prefix, skipped }, 'keys that are not UTF-8 left out of a listing');
    return names;
  }

  /**
   * A stand-in name for a key no POSIX name can show (empty or `.`/`..` components, a name over
   * 255 bytes); logged once per key, with how to reach it. Undefined for keys the listing could
   * not give exactly (not UTF-8): no request could name them.
   */
  protected standIn(dir: string, listed: string): string | undefined {
    if (!reachableKey(listed)) return undefined;
    const name = standInName(listed);
    const path = joinPath(dir, name);
    const key = listed.replace(/\/$/, '');
    if (this.standIns.get(path)?.key !== key) {
      this.standIns.set(path, { key, dir: listed.endsWith('/') });
      this.o.log.warn(
        { key: listed, shownAs: path },
        'a key no POSIX name can show is listed under a stand-in name; mv it to a proper name to use it as usual',
      );
    }
    return name;
  }
}
