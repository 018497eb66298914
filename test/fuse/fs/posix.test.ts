// POSIX behaviour a local filesystem gives and programs count on, beyond reading and writing:
// open files outliving their names, sizes past what the mount can hold.

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { toErrno } from '../../../fuse/fs/errno.ts';
import { S_IFBLK, S_IFCHR, S_IFIFO, S_IFSOCK } from '../../../fuse/fs/metadata.ts';
import { MemoryObjectClient } from '../../../fuse/s3/memory-client.ts';
import { standInName } from '../../../fuse/fs/keys.ts';
import type { Filesystem } from '../../../fuse/fs/filesystem.ts';
import { MiB, makeFs, quietLog, readFile, readOpened, writeFile } from './make-fs.ts';

async function errnoOf(p: Promise<unknown>): Promise<string | undefined> {
  return p.then(
    () => undefined,
    (e: unknown) => toErrno(e),
  );
}

describe('open files outlive their names', () => {
  it('keeps an unlinked file readable through a handle opened before', async () => {
    const fs = await makeFs(new MemoryObjectClient());
    const data = randomBytes(3 * MiB);
    await writeFile(fs, '/gone', data);
    const fh = await fs.open('/gone', 0);
    const first = await fs.read(fh, 0, 128 * 1024);
    await fs.unlink('/gone');
    expect(await errnoOf(fs.getattr('/gone'))).toBe('ENOENT');
    const rest = await readOpened(fs, fh);
    expect(Buffer.concat([first, rest.subarray(first.length)]).equals(data)).toBe(true);
  });

  it('keeps a file renamed away, or replaced by a rename, readable as it was opened', async () => {
    const fs = await makeFs(new MemoryObjectClient());
    const a = randomBytes(2 * MiB);
    const b = randomBytes(MiB);
    await writeFile(fs, '/a', a);
    await writeFile(fs, '/b', b);
    const readA = await fs.open('/a', 0);
    const readB = await fs.open('/b', 0);
    await fs.rename('/a', '/b');
    expect((await readOpened(fs, readA)).equals(a)).toBe(true);
    expect((await readOpened(fs, readB)).equals(b)).toBe(true);
  });
});

describe('sizes the mount cannot hold', () => {
  it('answers a truncate past the staging limit with EFBIG, by path and by handle', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem, { stagingLimit: MiB });
    await writeFile(fs, '/small', Buffer.from('abc'));
    expect(await errnoOf(fs.truncate('/small', 2 * MiB))).toBe('EFBIG');
    const fh = await fs.open('/small', 1);
    expect(await errnoOf(fs.ftruncate(fh, 2 * MiB))).toBe('EFBIG');
    await fs.release(fh);
    expect(mem.objects.get('small')?.body.toString()).toBe('abc');
  });
});

describe('special files, stored as s3fs stores them', () => {
  it('makes FIFOs, sockets and device nodes as empty objects whose mode carries the type', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem);
    const made = [
      ['/fifo', S_IFIFO | 0o644, 'fifo'],
      ['/sock', S_IFSOCK | 0o755, 'socket'],
      ['/chr', S_IFCHR | 0o600, 'chardev'],
      ['/blk', S_IFBLK | 0o660, 'blockdev'],
    ] as const;
    for (const [path, mode, kind] of made) {
      await fs.mknod(path, mode, 0, { uid: 42, gid: 43 });
      const stored = mem.objects.get(path.slice(1));
      expect(stored?.body.length).toBe(0);
      expect(stored?.metadata).toMatchObject({ mode: String(mode), uid: '42', gid: '43' });
      expect(await fs.getattr(path)).toMatchObject({ kind, perm: mode & 0o7777, uid: 42, size: 0 });
    }
    expect(await errnoOf(fs.mknod('/fifo', S_IFIFO | 0o644, 0))).toBe('EEXIST');
    await fs.rename('/fifo', '/fifo2');
    expect((await fs.getattr('/fifo2')).kind).toBe('fifo');
    await fs.unlink('/sock');
    expect((await fs.readdir('/')).map((e) => e.name).sort()).toEqual(['blk', 'chr', 'fifo2']);
  });

  it('shows a FIFO that s3fs stored as one', async () => {
    const mem = new MemoryObjectClient();
    await mem.put('from-s3fs', Buffer.alloc(0), { metadata: { mode: String(S_IFIFO | 0o640), uid: '7', gid: '8' } });
    const fs = await makeFs(mem);
    expect(await fs.getattr('/from-s3fs')).toMatchObject({ kind: 'fifo', perm: 0o640, uid: 7, gid: 8 });
  });
});

describe('times', () => {
  it('keeps the mtime through chmod, chown and rename, of files and of directories’ contents', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem, { cacheTtlMs: 0 });
    await fs.mkdir('/d', 0o755);
    await writeFile(fs, '/d/f', Buffer.from('x'));
    await writeFile(fs, '/g', Buffer.from('y'));
    // Written by the mount without an explicit mtime: the object's Last-Modified stands for it.
    const old = new Date('2020-01-02T03:04:05Z');
    mem.objects.get('d/f')!.lastModified = old;
    mem.objects.get('g')!.lastModified = old;
    expect((await fs.getattr('/g')).mtimeMs).toBe(old.getTime());
    await fs.chmod('/g', 0o600);
    await fs.chown('/g', 5, 6);
    await fs.rename('/g', '/h');
    expect(await fs.getattr('/h')).toMatchObject({ mtimeMs: old.getTime(), perm: 0o600, uid: 5 });
    await fs.rename('/d', '/e');
    expect((await fs.getattr('/e/f')).mtimeMs).toBe(old.getTime());
  });
});

describe('keys no POSIX name can show', () => {
  it('lists them under stand-in names that read, rename and remove the real objects', async () => {
    const mem = new MemoryObjectClient();
    const long = `only/${'y'.repeat(300)}`;
    await mem.put(long, Buffer.from('long'));
    await mem.put('odd/a//b', Buffer.from('double slash'));
    await mem.put('odd/./c', Buffer.from('dot'));
    const warned: object[] = [];
    const fs = await makeFs(mem, { log: { ...quietLog, warn: (obj) => warned.push(obj) } });
    // A directory holding only such a key does not look empty, and says why rmdir refuses.
    const only = await fs.readdir('/only');
    expect(only.map((e) => e.name)).toEqual([standInName(long)]);
    expect(await errnoOf(fs.rmdir('/only'))).toBe('ENOTEMPTY');
    expect((await readFile(fs, `/only/${standInName(long)}`)).toString()).toBe('long');
    await fs.rename(`/only/${standInName(long)}`, '/only/fine');
    expect(mem.objects.has(long)).toBe(false);
    expect(mem.objects.get('only/fine')?.body.toString()).toBe('long');
    // Empty and `.` components become stand-in directories; paths under them reach the keys.
    const slash = `/odd/a/${standInName('odd/a//')}`;
    expect((await fs.getattr(slash)).kind).toBe('dir');
    expect((await readFile(fs, `${slash}/b`)).toString()).toBe('double slash');
    const dot = `/odd/${standInName('odd/./')}`;
    expect((await fs.readdir(dot)).map((e) => e.name)).toEqual(['c']);
    await fs.unlink(`${dot}/c`);
    expect(mem.objects.has('odd/./c')).toBe(false);
    // Each one is logged once, with the real key.
    await fs.readdir('/only');
    expect(warned.filter((w) => (w as { key?: string }).key === long)).toHaveLength(1);
  });
});

describe('names too long', () => {
  for (const writeBack of [false, true]) {
    it(`answer ENAMETOOLONG to every operation, listed directory or not (write-back ${writeBack})`, async () => {
      const fs = await makeFs(new MemoryObjectClient(), { writeBack });
      const long = `/${'n'.repeat(256)}`;
      const ops = () => [
        fs.getattr(long),
        fs.open(long, 0),
        fs.unlink(long),
        fs.rmdir(long),
        fs.create(long, 0o644),
        fs.mkdir(long, 0o755),
      ];
      expect(await Promise.all(ops().map(errnoOf))).toEqual(Array(6).fill('ENAMETOOLONG'));
      await fs.readdir('/');
      expect(await Promise.all(ops().map(errnoOf))).toEqual(Array(6).fill('ENAMETOOLONG'));
      await fs.journal?.close();
    });
  }
});

describe('keys longer than S3 holds', () => {
  it('answer ENAMETOOLONG to lookups, creates and renames, counting the prefix and UTF-8 bytes', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem, { prefix: 'pre/fix' });
    // Components under NAME_MAX (é is two bytes), keys at 1024 bytes with the 8-byte prefix.
    const e = 'é'.repeat(100);
    let dir = '';
    for (let i = 0; i < 4; i++) {
      dir += `/${e}`;
      await fs.mkdir(dir, 0o755);
    }
    const fits = `${dir}/${'f'.repeat(1024 - 8 - 803 - 1)}`;
    const long = `${fits}x`;
    await writeFile(fs, fits, Buffer.from('fits'));
    expect(mem.objects.get(`pre/fix${fits}`)?.body.toString()).toBe('fits');
    const ops = [
      fs.getattr(long),
      fs.open(long, 0),
      fs.unlink(long),
      fs.rmdir(long),
      fs.create(long, 0o644),
      fs.mkdir(`${dir}/${'d'.repeat(1024 - 8 - 803 - 1)}`, 0o755),
      fs.rename(fits, long),
      fs.rename(long, fits),
      fs.rename(`/${e}`, `/${e}x`),
      fs.getattr(`${long}/deeper`),
    ];
    expect(await Promise.all(ops.map(errnoOf))).toEqual(Array(ops.length).fill('ENAMETOOLONG'));
    expect(mem.objects.get(`pre/fix${fits}`)?.body.toString()).toBe('fits');
  });
});

describe('several descriptors of one file', () => {
  for (const writeBack of [false, true]) {
    it(`share one content, and a reader opened before sees what is written (write-back ${writeBack})`, async () => {
      const fs = await makeFs(new MemoryObjectClient(), { writeBack });
      await writeFile(fs, '/c', Buffer.from('old'));
      const reader = await fs.open('/c', 0);
      const w1 = await fs.open('/c', 2 | 0o1000); // O_RDWR | O_TRUNC
      const w2 = await fs.open('/c', 2 | 0o2000); // O_RDWR | O_APPEND
      await fs.write(w1, Buffer.from('new'), 0);
      await fs.ftruncate(w2, 6);
      // While written, and after one writer's close has published it, every descriptor agrees.
      expect((await fs.read(reader, 0, 10)).toString()).toBe('new\0\0\0');
      await fs.flush(w1);
      await fs.release(w1);
      for (const fh of [reader, w2]) expect((await fs.read(fh, 0, 10)).toString()).toBe('new\0\0\0');
      await fs.release(w2);
      await fs.release(reader);
      await fs.journal?.close();
    });
  }
});

describe('a truncate that meets the release of the last descriptor', () => {
  // The kernel answers close(2) once flush has returned and sends the release later, on its own:
  // a truncate(2) by path right after the close can reach the handle before its release does, or
  // while the release uploads what the handle still held.
  for (const writeBack of [false, true]) {
    const stored = async (fs: Filesystem, mem: MemoryObjectClient, key: string) => {
      // With --write-back the upload runs after the release: wait for the journal to send it.
      await fs.journal?.settled();
      await fs.journal?.close();
      return mem.objects.get(key)?.body;
    };

    it(`is published when it comes before the release (write-back ${writeBack})`, async () => {
      const mem = new MemoryObjectClient();
      const fs = await makeFs(mem, { writeBack });
      const fh = await fs.create('/t', 0o644);
      await fs.flush(fh);
      await Promise.all([fs.truncate('/t', 12345), fs.release(fh)]);
      expect((await fs.getattr('/t')).size).toBe(12345);
      expect((await stored(fs, mem, 't'))?.length).toBe(12345);
    });

    it(`is published when it comes while the release uploads (write-back ${writeBack})`, async () => {
      const mem = new MemoryObjectClient();
      const fs = await makeFs(mem, { writeBack });
      const fh = await fs.create('/u', 0o644);
      await fs.write(fh, Buffer.from('hello world'), 0);
      const released = fs.release(fh);
      await new Promise((r) => setImmediate(r));
      await Promise.all([fs.truncate('/u', 3), released]);
      expect((await fs.getattr('/u')).size).toBe(3);
      expect((await stored(fs, mem, 'u'))?.toString()).toBe('hel');
    });
  }
});
