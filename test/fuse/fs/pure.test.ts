import { describe, expect, it } from 'vitest';
import { cacheDiskCode, FsError, toErrno } from '../../../fuse/fs/errno.ts';
import {
  checkNewPath,
  dirPrefix,
  entryName,
  fileKey,
  normalisePrefix,
  parentOf,
} from '../../../fuse/fs/keys.ts';
import { InodeTable, inodeHash } from '../../../fuse/fs/inodes.ts';
import { decodeListedKey, listedKey } from '../../../fuse/s3/url-keys.ts';
import { MemoryBudget } from '../../../fuse/fs/memory-budget.ts';
import { attrFromHead, metadataOf, S_IFLNK } from '../../../fuse/fs/metadata.ts';
import { FIRST_PART_SIZE, leadingCopyRanges, maxStreamedSize, partRanges, partSize } from '../../../fuse/fs/part-sizes.ts';
import { INITIAL_WINDOW, MAX_CHUNK, pieceSize } from '../../../fuse/fs/prefetcher.ts';
import { ObjectError, S3_LIMITS } from '../../../fuse/s3/object-client.ts';

const defaults = { uid: 1, gid: 2, fileMode: 0o644, dirMode: 0o755, mountedAtMs: 0 };

describe('readahead GET sizes', () => {
  const MiB = 2 ** 20;
  it('split a window in two, between the first window and the cap', () => {
    const budget = 1024 * MiB;
    expect(pieceSize(INITIAL_WINDOW, budget)).toBe(INITIAL_WINDOW);
    expect(pieceSize(4 * MiB, budget)).toBe(2 * MiB);
    expect(pieceSize(16 * MiB, budget)).toBe(8 * MiB);
    // The default --readahead: two GETs in flight, each as large as the cap.
    expect(pieceSize(64 * MiB, budget)).toBe(MAX_CHUNK);
    expect(pieceSize(256 * MiB, budget)).toBe(MAX_CHUNK);
  });
  it('stay at an eighth of a small memory budget', () => {
    expect(pieceSize(64 * MiB, 64 * MiB)).toBe(8 * MiB);
    expect(pieceSize(64 * MiB, 8 * MiB)).toBe(INITIAL_WINDOW);
  });
});

describe('part sizes', () => {
  it('grow so a stream reaches S3 object limit within 10,000 parts', () => {
    expect(partSize(1)).toBe(FIRST_PART_SIZE);
    expect(partSize(1000)).toBe(FIRST_PART_SIZE);
    expect(partSize(1001)).toBe(2 * FIRST_PART_SIZE);
    expect(partSize(10_000)).toBeLessThanOrEqual(S3_LIMITS.maxPartSize);
    expect(maxStreamedSize()).toBeGreaterThanOrEqual(S3_LIMITS.maxObjectSize);
  });
  it('split a known size into covering ranges', () => {
    const r = partRanges(36 * 2 ** 20);
    expect(r.map((x) => x.end - x.start)).toEqual([16, 16, 4].map((m) => m * 2 ** 20));
    expect(partRanges(0)).toEqual([]);
  });
  it('copy the leading bytes of an object in parts that more parts may follow', () => {
    const MiB = 2 ** 20;
    const sizes = (size: number, first?: number) => leadingCopyRanges(size, first).map((x) => x.end - x.start);
    expect(sizes(36 * MiB)).toEqual([16, 20].map((m) => m * MiB));
    expect(sizes(32 * MiB)).toEqual([16, 16].map((m) => m * MiB));
    expect(sizes(12 * MiB, 5 * MiB)).toEqual([5, 7].map((m) => m * MiB));
    expect(sizes(6 * MiB)).toEqual([6 * MiB]);
    expect(sizes(5 * MiB - 1)).toEqual([]);
    // Joined parts above 5 GiB are split in two halves, each within S3's part sizes.
    const big = leadingCopyRanges(S3_LIMITS.maxPartSize + 1, S3_LIMITS.maxPartSize);
    expect(big.map((x) => x.end - x.start)).toEqual([S3_LIMITS.maxPartSize / 2, S3_LIMITS.maxPartSize / 2 + 1]);
  });
});

describe('keys', () => {
  it('map paths to keys under a prefix', () => {
    expect(normalisePrefix('/data/run1/')).toBe('data/run1/');
    expect(normalisePrefix('')).toBe('');
    expect(fileKey('p/', '/a/b')).toBe('p/a/b');
    expect(dirPrefix('p/', '/')).toBe('p/');
    expect(dirPrefix('p/', '/a')).toBe('p/a/');
    expect(parentOf('/a/b')).toBe('/a');
    expect(parentOf('/a')).toBe('/');
  });
  it('leave out keys no POSIX name can show', () => {
    expect(entryName('d/', 'd/x')).toBe('x');
    expect(entryName('d/', 'd/sub/')).toBe('sub');
    for (const bad of ['d//', 'd/./', 'd/../', 'd/a\uDCFFb', `d/${'n'.repeat(256)}`]) {
      expect(entryName('d/', bad)).toBeUndefined();
    }
  });
  it('refuse names too long for NAME_MAX or for a 1024-byte key', () => {
    expect(() => checkNewPath('', `/${'n'.repeat(256)}`)).toThrow(FsError);
    expect(() => checkNewPath('', `/${'d/'.repeat(400)}${'x'.repeat(250)}`)).toThrow(
      /ENAMETOOLONG|key longer/,
    );
    checkNewPath('', `/${'n'.repeat(255)}`);
  });
});

describe('metadata in s3fs format', () => {
  it('round-trips mode, owner and mtime', () => {
    const attr = { kind: 'file' as const, perm: 0o750, uid: 7, gid: 8, size: 3, mtimeMs: 1_700_000_000_000 };
    const meta = metadataOf(attr);
    expect(meta).toEqual({ mode: String(0o100750), uid: '7', gid: '8', mtime: '1700000000' });
    const back = attrFromHead(
      { key: 'k', size: 3, etag: 'e', lastModified: new Date(0), metadata: meta },
      defaults,
      false,
    );
    expect(back).toMatchObject({ kind: 'file', perm: 0o750, uid: 7, gid: 8, mtimeMs: 1_700_000_000_000 });
  });
  it('stores mtime and ctime with their milliseconds, as seconds.nanoseconds, and reads them back', () => {
    const attr = { kind: 'file' as const, perm: 0o644, uid: 1, gid: 1, size: 0, mtimeMs: 978_307_200_123, ctimeMs: 1_700_000_000_947 };
    const meta = metadataOf(attr);
    expect(meta).toMatchObject({ mtime: '978307200.123000000', ctime: '1700000000.947000000' });
    const back = attrFromHead({ key: 'k', size: 0, etag: 'e', lastModified: new Date(0), metadata: meta }, defaults, false);
    expect(back).toMatchObject({ mtimeMs: 978_307_200_123, ctimeMs: 1_700_000_000_947 });
  });
  it('reads s3fs symlinks, fractional mtimes, and falls back to defaults', () => {
    const link = attrFromHead(
      {
        key: 'l',
        size: 4,
        etag: 'e',
        lastModified: new Date(5000),
        metadata: { mode: String(S_IFLNK | 0o777), mtime: '12.5' },
      },
      defaults,
      false,
    );
    expect(link).toMatchObject({ kind: 'symlink', mtimeMs: 12_500 });
    const plain = attrFromHead(
      { key: 'p', size: 1, etag: 'e', lastModified: new Date(5000), metadata: {} },
      defaults,
      false,
    );
    expect(plain).toMatchObject({ kind: 'file', perm: 0o644, uid: 1, gid: 2, mtimeMs: 5000 });
  });
});

describe('errno mapping', () => {
  it('names every failure in one place', () => {
    expect(toErrno(new FsError('ENOTEMPTY'))).toBe('ENOTEMPTY');
    expect(toErrno(new ObjectError('not-found', 'x'))).toBe('ENOENT');
    expect(toErrno(new ObjectError('access-denied', 'x'))).toBe('EACCES');
    expect(toErrno(new ObjectError('throttled', 'x'))).toBe('EIO');
    expect(toErrno(Object.assign(new Error('disk'), { code: 'ENOSPC' }))).toBe('ENOSPC');
    expect(toErrno(new Error('anything'))).toBe('EIO');
  });

  it('counts a damaged file system as a failing cache disk, though libuv has no name for its errors', () => {
    const sys = (errno: number, code: string) => Object.assign(new Error(code), { errno, code });
    expect(cacheDiskCode(sys(-30, 'EROFS'))).toBe('EROFS');
    expect(cacheDiskCode(sys(-74, 'Unknown system error -74'))).toBe('EBADMSG');
    expect(cacheDiskCode(sys(-117, 'Unknown system error -117'))).toBe('EUCLEAN');
    expect(toErrno(sys(-74, 'Unknown system error -74'))).toBe('EIO');
    // Not the disk: a refusal of ours, the bucket, a missing file.
    expect(cacheDiskCode(new FsError('EIO'))).toBeUndefined();
    expect(cacheDiskCode(new ObjectError('throttled', 'x'))).toBeUndefined();
    expect(cacheDiskCode(sys(-2, 'ENOENT'))).toBeUndefined();
  });
});

describe('memory budget', () => {
  it('blocks at the limit, serves waiters in order, and times out', async () => {
    const b = new MemoryBudget(10);
    expect(b.tryAcquire(6)).toBe(true);
    expect(b.tryAcquire(6)).toBe(false);
    const order: number[] = [];
    const w1 = b.acquire(6).then((ok) => order.push(ok ? 1 : -1));
    const w2 = b.acquire(2).then((ok) => order.push(ok ? 2 : -2));
    expect(await b.acquire(9, 20)).toBe(false);
    b.release(6);
    await Promise.all([w1, w2]);
    expect(order).toEqual([1, 2]);
    expect(b.used).toBe(8);
    expect(b.tryAcquire(100)).toBe(false);
    b.release(8);
    expect(b.tryAcquire(100)).toBe(true);
    expect(b.used).toBe(10);
  });
});

describe('inode numbers', () => {
  it('are the hash of the key, and a key that hashes like another gets a number of its own', () => {
    // Find two keys whose 32-bit hashes collide (a birthday search: about 80,000 keys).
    const seen = new Map<number, string>();
    let pair: [string, string] | undefined;
    for (let i = 0; !pair; i++) {
      const key = `dir/file-${i}`;
      const other = seen.get(inodeHash(key));
      if (other) pair = [other, key];
      else seen.set(inodeHash(key), key);
    }
    const table = new InodeTable();
    const [a, b] = pair;
    expect(table.of(a)).toBe(inodeHash(a));
    const nb = table.of(b);
    expect(nb).not.toBe(table.of(a));
    expect(table.of(b)).toBe(nb);
    expect(table.of(a)).toBe(inodeHash(a));
    // A rename hands the number on; a new key at the old name gets another.
    const na = table.of(a);
    table.rename(a, 'elsewhere');
    expect(table.of('elsewhere')).toBe(na);
    expect(table.of(a)).not.toBe(na);
    table.renameTree('dir/', 'moved/');
    expect(table.of(`moved/${b.slice(4)}`)).toBe(nb);
  });
});

describe('keys from URL-encoded listings', () => {
  it('decode percent escapes and plus signs to the stored key, bytes that are not UTF-8 marked, a real U+FFFD kept', () => {
    expect(decodeListedKey('a/ctl%01x%1B%5B0m')).toBe('a/ctl\x01x\x1b[0m');
    expect(decodeListedKey('sp+ace%2Bplus%2525')).toBe('sp ace+plus%25');
    expect(decodeListedKey('%C3%BCn%C3%AF/€')).toBe('ünï/€');
    expect(decodeListedKey('bad%FFbyte')).toBe('bad\uDCFFbyte');
    expect(decodeListedKey('real%EF%BF%BD')).toBe('real\uFFFD');
    expect(decodeListedKey('cut%E2%82')).toBe('cut\uDCE2\uDC82');
    expect(decodeListedKey('100%')).toBe('100%');
    expect(listedKey('a+b', undefined)).toBe('a+b');
    expect(listedKey('a+b', 'url')).toBe('a b');
  });
});
