import { randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { FsError, toErrno } from '../../../fuse/fs/errno.ts';
import type { Filesystem } from '../../../fuse/fs/filesystem.ts';
import { standInName } from '../../../fuse/fs/keys.ts';
import { S_IFLNK } from '../../../fuse/fs/metadata.ts';
import { FaultInjectingClient } from '../../../fuse/s3/fault-client.ts';
import { MemoryObjectClient } from '../../../fuse/s3/memory-client.ts';
import type { ByteRange } from '../../../fuse/s3/object-client.ts';
import { MiB, makeFs, readFile, readOpened, writeFile } from './make-fs.ts';

async function errnoOf(p: Promise<unknown>): Promise<string | undefined> {
  return p.then(
    () => undefined,
    (e: unknown) => toErrno(e),
  );
}

describe('files', () => {
  it('writes a small file with one PUT and reads it back', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem);
    await writeFile(fs, '/small', Buffer.from('hello'));
    expect(mem.calls.get('put')).toBe(1);
    expect(mem.calls.get('createMultipart')).toBeUndefined();
    expect((await readFile(fs, '/small')).toString()).toBe('hello');
    expect((await fs.getattr('/small')).size).toBe(5);
  });

  it('streams a large file as a multipart upload and frees its memory', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem);
    const data = randomBytes(23 * MiB);
    await writeFile(fs, '/big', data);
    // A first part of 16 MiB (the single-PUT size), then 5 MiB parts.
    expect(mem.calls.get('uploadPart')).toBe(3);
    expect(mem.objects.get('big')?.body.equals(data)).toBe(true);
    expect((await readFile(fs, '/big')).equals(data)).toBe(true);
    expect(fs.memoryInUse).toBe(0);
  });

  it('sends a file up to 16 MiB in one PUT, and a bigger one in parts', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem);
    const ten = randomBytes(10 * MiB);
    await writeFile(fs, '/ten', ten);
    expect(mem.calls.get('put')).toBe(1);
    expect(mem.calls.get('createMultipart')).toBeUndefined();
    expect(mem.objects.get('ten')?.body.equals(ten)).toBe(true);
    await writeFile(fs, '/seventeen', randomBytes(17 * MiB));
    expect(mem.calls.get('createMultipart')).toBe(1);
    expect(fs.memoryInUse).toBe(0);
  });

  it('after a big file, starts the next multipart upload at the first write, and aborts it for a small file', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem);
    const big = randomBytes(17 * MiB);
    // Before any big file: nothing is started until the first part is full.
    const first = await fs.create('/a', 0o644);
    await fs.write(first, big.subarray(0, 128 * 1024), 0);
    expect(mem.calls.get('createMultipart')).toBeUndefined();
    for (let at = 128 * 1024; at < big.length; at += 128 * 1024) {
      await fs.write(first, big.subarray(at, at + 128 * 1024), at);
    }
    await fs.flush(first);
    await fs.release(first);
    expect(mem.calls.get('createMultipart')).toBe(1);
    // The next file's upload starts with its first bytes.
    const second = await fs.create('/b', 0o644);
    await fs.write(second, big.subarray(0, 128 * 1024), 0);
    expect(mem.calls.get('createMultipart')).toBe(2);
    for (let at = 128 * 1024; at < big.length; at += 128 * 1024) {
      await fs.write(second, big.subarray(at, at + 128 * 1024), at);
    }
    await fs.flush(second);
    await fs.release(second);
    expect(mem.objects.get('b')?.body.equals(big)).toBe(true);
    // A small file after it: started too, but it goes up in one PUT and the upload is aborted.
    const small = randomBytes(MiB);
    await writeFile(fs, '/c', small);
    expect(mem.calls.get('createMultipart')).toBe(3);
    expect(mem.calls.get('put')).toBe(1);
    await vi.waitFor(() => expect(mem.uploads.size).toBe(0));
    expect(mem.objects.get('c')?.body.equals(small)).toBe(true);
    // And after a small file, the cautious way again.
    await writeFile(fs, '/d', small);
    expect(mem.calls.get('createMultipart')).toBe(3);
    expect(fs.memoryInUse).toBe(0);
    // A stream that moves to a staging file gives up an upload it started ahead.
    await writeFile(fs, '/e', big);
    const odd = await fs.create('/f', 0o644);
    await fs.write(odd, small, 0);
    expect(mem.calls.get('createMultipart')).toBe(5);
    const patch = randomBytes(4096);
    await fs.write(odd, patch, 0);
    await fs.flush(odd);
    await fs.release(odd);
    await vi.waitFor(() => expect(mem.uploads.size).toBe(0));
    expect(mem.objects.get('f')?.body.equals(Buffer.concat([patch, small.subarray(4096)]))).toBe(true);
  });

  it('creates an empty file on close even with no writes', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem);
    const fh = await fs.create('/empty', 0o600);
    await fs.flush(fh);
    await fs.release(fh);
    expect(mem.objects.get('empty')?.body.length).toBe(0);
    expect(mem.objects.get('empty')?.metadata.mode).toBe(String(0o100600));
  });

  it('applies random writes and appends through a staging file', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem);
    await writeFile(fs, '/f', Buffer.from('hello world'));
    const fh = await fs.open('/f', 2);
    await fs.write(fh, Buffer.from('J'), 6);
    await fs.write(fh, Buffer.from('!!'), 11);
    expect((await fs.read(fh, 0, 100)).toString()).toBe('hello Jorld!!');
    await fs.flush(fh);
    await fs.release(fh);
    expect(mem.objects.get('f')?.body.toString()).toBe('hello Jorld!!');
  });

  it('reads back what the same handle wrote, also after parts were sent', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem);
    const data = randomBytes(12 * MiB);
    const fh = await fs.create('/pack', 0o644);
    await fs.write(fh, data.subarray(0, 11 * MiB), 0);
    expect((await fs.read(fh, 0, 4)).equals(data.subarray(0, 4))).toBe(true);
    await fs.write(fh, data.subarray(11 * MiB), 11 * MiB);
    await fs.write(fh, Buffer.from('PACK'), 0);
    await fs.flush(fh);
    await fs.release(fh);
    const want = Buffer.concat([Buffer.from('PACK'), data.subarray(4)]);
    expect(mem.objects.get('pack')?.body.equals(want)).toBe(true);
  });

  it('publishes nothing when a streamed file is written out of order: the old object stays until close', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem);
    const old = randomBytes(3 * MiB);
    await mem.put('f', old);
    const data = randomBytes(24 * MiB);
    const fh = await fs.open('/f', 1 | 0o1000);
    await fs.write(fh, data.subarray(0, 21 * MiB), 0);
    expect(mem.calls.get('uploadPart')).toBeGreaterThan(0);
    // A seek back into bytes already sent: the bucket must still hold the old object, whole.
    await fs.write(fh, Buffer.from('PATCH'), 5 * MiB);
    await fs.write(fh, data.subarray(21 * MiB), 21 * MiB);
    expect(mem.calls.get('completeMultipart') ?? 0).toBe(0);
    expect(mem.objects.get('f')?.body.equals(old)).toBe(true);
    expect(mem.uploads.size).toBe(0);
    await fs.flush(fh);
    await fs.release(fh);
    const want = Buffer.from(data);
    Buffer.from('PATCH').copy(want, 5 * MiB);
    expect(mem.objects.get('f')?.body.equals(want)).toBe(true);
  });

  it('keeps a new file out of the bucket until close, also when a seek follows sent parts', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem);
    const data = randomBytes(22 * MiB);
    const fh = await fs.create('/new', 0o644);
    await fs.write(fh, data, 0);
    expect(mem.calls.get('uploadPart')).toBeGreaterThan(0);
    await fs.ftruncate(fh, 17 * MiB);
    await fs.write(fh, Buffer.from('x'), 1);
    expect(mem.objects.has('new')).toBe(false);
    // A close of one descriptor (dup'd, or shared with a child) publishes the content as it stands.
    await fs.flush(fh);
    const want = Buffer.from(data.subarray(0, 17 * MiB));
    want[1] = 'x'.charCodeAt(0);
    expect(mem.objects.get('new')?.body.equals(want)).toBe(true);
    // Later writes change the local copy; nothing is downloaded again.
    const gets = mem.calls.get('get') ?? 0;
    await fs.write(fh, Buffer.from('y'), 2);
    await fs.flush(fh);
    await fs.release(fh);
    want[2] = 'y'.charCodeAt(0);
    expect(mem.objects.get('new')?.body.equals(want)).toBe(true);
    expect(mem.calls.get('get') ?? 0).toBe(gets);
  });

  it('publishes nothing when a file or its directory is renamed while written; close publishes the new name', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem);
    await fs.mkdir('/d', 0o755);
    await mem.put('d/f', Buffer.from('old'));
    await mem.put('target', Buffer.from('target'));
    const data = randomBytes(22 * MiB);
    const fh = await fs.open('/d/f', 1 | 0o1000);
    await fs.write(fh, data.subarray(0, 21 * MiB), 0);
    expect(mem.calls.get('uploadPart')).toBeGreaterThan(0);
    await fs.rename('/d/f', '/target');
    // The old object stays until the new name is published (a crash leaves the bucket as it was),
    // but the name is gone from the mount.
    expect(mem.objects.get('d/f')?.body.toString()).toBe('old');
    expect(await errnoOf(fs.getattr('/d/f'))).toBe('ENOENT');
    expect((await fs.readdir('/d')).map((e) => e.name)).toEqual([]);
    expect(mem.objects.get('target')?.body.toString()).toBe('target');
    expect((await fs.getattr('/target')).size).toBe(21 * MiB);
    await fs.mkdir('/e', 0o755);
    const g = await fs.create('/e/g', 0o644);
    await fs.write(g, Buffer.from('gee'), 0);
    await fs.rename('/e', '/e2');
    expect([...mem.objects.keys()].filter((k) => k.endsWith('/g'))).toEqual([]);
    await fs.write(fh, data.subarray(21 * MiB), 21 * MiB);
    await fs.flush(fh);
    await fs.release(fh);
    await fs.flush(g);
    await fs.release(g);
    expect(mem.objects.get('target')?.body.equals(data)).toBe(true);
    expect(mem.objects.has('d/f')).toBe(false);
    expect(mem.objects.get('e2/g')?.body.toString()).toBe('gee');
    expect(mem.objects.has('e/g')).toBe(false);
  });

  it('refuses a seek back with EFBIG past the staging limit, and the stream goes on unpublished', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem, { stagingLimit: 6 * MiB });
    const data = randomBytes(24 * MiB);
    const fh = await fs.create('/big', 0o644);
    await fs.write(fh, data.subarray(0, 21 * MiB), 0);
    expect(await errnoOf(fs.write(fh, Buffer.from('x'), 0))).toBe('EFBIG');
    expect(mem.objects.has('big')).toBe(false);
    await fs.write(fh, data.subarray(21 * MiB), 21 * MiB);
    await fs.flush(fh);
    await fs.release(fh);
    expect(mem.objects.get('big')?.body.equals(data)).toBe(true);
  });

  it('goes on appending past the staging limit after a flush, from the bytes just published', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem, { stagingLimit: 6 * MiB });
    const data = randomBytes(24 * MiB);
    const fh = await fs.create('/big', 0o644);
    await fs.write(fh, data.subarray(0, 21 * MiB), 0);
    // A child's copy of the descriptor closing: the file is published as it stands, uncopied.
    await fs.flush(fh);
    expect(mem.objects.get('big')?.body.equals(data.subarray(0, 21 * MiB))).toBe(true);
    await fs.write(fh, data.subarray(21 * MiB), 21 * MiB);
    expect(await errnoOf(fs.write(fh, Buffer.from('x'), 0))).toBe('EFBIG');
    await fs.flush(fh);
    await fs.release(fh);
    expect(mem.objects.get('big')?.body.equals(data)).toBe(true);
  });

  it('does not go on from bytes another client replaced after the flush: the append fails, theirs stay', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem, { stagingLimit: 6 * MiB });
    const data = randomBytes(24 * MiB);
    const fh = await fs.create('/big', 0o644);
    await fs.write(fh, data.subarray(0, 21 * MiB), 0);
    await fs.flush(fh);
    const theirs = randomBytes(21 * MiB);
    await mem.put('big', theirs);
    const appended = fs.write(fh, data.subarray(21 * MiB), 21 * MiB).then(() => fs.flush(fh));
    expect(await errnoOf(appended)).toBeDefined();
    await fs.release(fh).catch(() => undefined);
    expect(mem.objects.get('big')?.body.equals(theirs)).toBe(true);
  });

  it('keeps a file unlinked after a flush readable and writable through its descriptor, and drops it at close', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem);
    const data = randomBytes(64 * 1024);
    const fh = await fs.create('/tmp-file', 0o600);
    await fs.write(fh, data, 0);
    await fs.flush(fh);
    await fs.unlink('/tmp-file');
    expect(mem.objects.has('tmp-file')).toBe(false);
    expect((await fs.read(fh, 0, data.length)).equals(data)).toBe(true);
    await fs.write(fh, Buffer.from('tail'), data.length);
    await fs.flush(fh);
    expect((await fs.read(fh, data.length - 2, 6)).equals(Buffer.concat([data.subarray(-2), Buffer.from('tail')]))).toBe(true);
    await fs.release(fh);
    expect(mem.objects.has('tmp-file')).toBe(false);
  });

  it('refuses to stage an object over the staging limit with EFBIG', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem, { stagingLimit: MiB });
    await mem.put('huge', randomBytes(2 * MiB));
    const fh = await fs.open('/huge', 1);
    expect(await errnoOf(fs.write(fh, Buffer.from('x'), 10))).toBe('EFBIG');
    await fs.release(fh);
  });

  it('truncates by path to zero and to a length', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem);
    await writeFile(fs, '/t', Buffer.from('abcdef'));
    await fs.truncate('/t', 3);
    expect(mem.objects.get('t')?.body.toString()).toBe('abc');
    await fs.truncate('/t', 0);
    expect(mem.objects.get('t')?.body.length).toBe(0);
    expect((await fs.getattr('/t')).size).toBe(0);
  });

  it('drops the data of a file unlinked while open', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem);
    const fh = await fs.create('/gone', 0o644);
    await fs.write(fh, Buffer.from('x'), 0);
    await fs.unlink('/gone');
    await fs.flush(fh);
    await fs.release(fh);
    expect(mem.objects.has('gone')).toBe(false);
  });

  it('spills to a staging file when the memory budget is spent, and still completes', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem, { memoryLimit: 6 * MiB, memoryWaitMs: 50 });
    const a = await fs.create('/a', 0o644);
    const b = await fs.create('/b', 0o644);
    await fs.write(a, Buffer.from('first'), 0);
    await fs.write(b, Buffer.from('second'), 0);
    await fs.flush(a);
    await fs.flush(b);
    await fs.release(a);
    await fs.release(b);
    expect(mem.objects.get('a')?.body.toString()).toBe('first');
    expect(mem.objects.get('b')?.body.toString()).toBe('second');
    expect(fs.memoryInUse).toBe(0);
  });
});

describe('reads', () => {
  it('opens a known file for reading with one ranged GET that also revalidates it', async () => {
    const mem = new MemoryObjectClient();
    const data = randomBytes(3 * MiB);
    await mem.put('one-trip', data);
    const fs = await makeFs(mem);
    await fs.getattr('/one-trip');
    await mem.put('one-trip', data.subarray(0, 2 * MiB));
    mem.calls.clear();
    const fh = await fs.open('/one-trip', 0);
    expect(mem.calls.get('getWithHead')).toBe(1);
    expect(mem.calls.get('head')).toBeUndefined();
    expect((await fs.getattr('/one-trip')).size).toBe(2 * MiB);
    expect((await fs.read(fh, 0, 4096)).equals(data.subarray(0, 4096))).toBe(true);
    await fs.release(fh);
    expect(fs.memoryInUse).toBe(0);
  });

  it('reads ahead on sequential access and stays small on seeks', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem);
    const data = randomBytes(32 * MiB);
    await mem.put('seq', data);
    mem.calls.clear();
    expect((await readFile(fs, '/seq')).equals(data)).toBe(true);
    // 256 reads of 128 KiB; readahead makes them a handful of GETs.
    expect(mem.calls.get('get')).toBeLessThan(16);
    mem.calls.clear();
    const fh = await fs.open('/seq', 0);
    for (const off of [30 * MiB, 2 * MiB, 17 * MiB]) {
      expect((await fs.read(fh, off, 4096)).equals(data.subarray(off, off + 4096))).toBe(true);
    }
    await fs.release(fh);
    expect(mem.calls.get('get')).toBe(3);
    expect(fs.memoryInUse).toBe(0);
  });
});

/** Files a–d of `bytes` each in a listed root, with /a and /b read whole: a whole-file reader. */
async function afterTwoWholeReads(bytes: number): Promise<{ mem: MemoryObjectClient; fs: Filesystem }> {
  const mem = new MemoryObjectClient();
  for (const n of ['a', 'b', 'c', 'd']) await mem.put(n, randomBytes(bytes));
  const fs = await makeFs(mem);
  await fs.readdir('/');
  await readFile(fs, '/a');
  await readFile(fs, '/b');
  return { mem, fs };
}

describe('whole-file readers', () => {
  it('after two whole-file reads, asks for the rest of the next file inside open()', async () => {
    const mem = new MemoryObjectClient();
    const files = ['a', 'b', 'c'].map((n) => [n, randomBytes(10 * MiB)] as const);
    for (const [n, data] of files) await mem.put(n, data);
    const fs = await makeFs(mem);
    await fs.readdir('/');
    expect((await readFile(fs, '/a')).equals(files[0]![1])).toBe(true);
    expect((await readFile(fs, '/b')).equals(files[1]![1])).toBe(true);
    mem.calls.clear();
    const fh = await fs.open('/c', 0);
    // One ranged GET with the head, and the remaining 9 MiB in two parallel GETs, before any read.
    expect(mem.calls.get('getWithHead')).toBe(1);
    expect(mem.calls.get('get')).toBe(2);
    expect((await readOpened(fs, fh)).equals(files[2]![1])).toBe(true);
    expect(mem.calls.get('get')).toBe(2);
    expect(fs.memoryInUse).toBe(0);
  });

  it('goes back to cautious readahead after a seek, and ignores what it asked for a replaced file', async () => {
    const { mem, fs } = await afterTwoWholeReads(4 * MiB);
    const seeker = await fs.open('/c', 0);
    await fs.read(seeker, 3 * MiB, 4096);
    await fs.read(seeker, 0, 4096);
    await fs.release(seeker);
    mem.calls.clear();
    await fs.release(await fs.open('/d', 0));
    expect(mem.calls.get('get')).toBeUndefined();

    await readFile(fs, '/a');
    await readFile(fs, '/b');
    const replaced = randomBytes(5 * MiB + 7);
    await mem.put('d', replaced);
    expect((await readFile(fs, '/d')).equals(replaced)).toBe(true);
    expect(fs.memoryInUse).toBe(0);
  });
});

describe('readahead across files', () => {
  async function readThree(): Promise<{ mem: MemoryObjectClient; fs: Filesystem; d: Buffer }> {
    const mem = new MemoryObjectClient();
    for (const n of ['a', 'b', 'c']) await mem.put(n, randomBytes(3 * MiB));
    const d = randomBytes(6 * MiB + 3);
    await mem.put('d', d);
    const fs = await makeFs(mem);
    await fs.readdir('/');
    for (const n of ['/a', '/b', '/c']) await readFile(fs, n);
    return { mem, fs, d };
  }

  it('fetches the next file of the directory while the last is read, and uses it after a HEAD', async () => {
    const { mem, fs, d } = await readThree();
    // While /c was read, /d (next in the listing) was asked for.
    expect(fs.nextFile.made).toBe(1);
    mem.calls.clear();
    const fh = await fs.open('/d', 0);
    expect(mem.calls.get('head')).toBe(1);
    expect(mem.calls.get('getWithHead')).toBeUndefined();
    expect((await readOpened(fs, fh)).equals(d)).toBe(true);
    expect(mem.calls.get('get')).toBeUndefined();
    expect(fs.nextFile.taken).toBe(1);
    expect(fs.memoryInUse).toBe(0);
  });

  it('follows a walker that reads in inode order (cp -r), after one file shows it', async () => {
    const mem = new MemoryObjectClient();
    const names = ['a', 'b', 'c', 'd', 'e', 'f'];
    for (const n of names) await mem.put(n, randomBytes(2 * MiB));
    const fs = await makeFs(mem);
    await fs.readdir('/');
    // cp -r's order: by the inode numbers the mount gives, not by name.
    const walk = [...names].sort((x, y) => fs.inodeOf(`/${x}`, 'file') - fs.inodeOf(`/${y}`, 'file'));
    expect(walk).not.toEqual(names);
    for (const n of walk) await readFile(fs, `/${n}`);
    // Guesses start after two whole reads (the third file on): each one is the file opened next.
    expect(fs.nextFile.made).toBe(walk.length - 3);
    expect(fs.nextFile.taken).toBe(walk.length - 3);
    expect(fs.memoryInUse).toBe(0);
  });

  /** Three small files read whole, so that the 40 MiB /d is guessed, under a 64 MiB window; /e after it if given. */
  async function guessedBig(e?: Buffer): Promise<{ mem: MemoryObjectClient; fs: Filesystem; d: Buffer }> {
    const mem = new MemoryObjectClient();
    for (const n of ['a', 'b', 'c']) await mem.put(n, randomBytes(3 * MiB));
    const d = randomBytes(40 * MiB);
    await mem.put('d', d);
    if (e) await mem.put('e', e);
    const fs = await makeFs(mem, { maxReadahead: 64 * MiB, initialReadahead: 64 * MiB, memoryLimit: 128 * MiB });
    await fs.readdir('/');
    for (const n of ['/a', '/b', '/c']) await readFile(fs, n);
    expect(fs.nextFile.guessedUpTo('/d')).toBe(17 * MiB);
    return { mem, fs, d };
  }

  it('asks for the rest of the window inside the open of a guessed file, before the first read', async () => {
    const { mem, fs, d } = await guessedBig();
    mem.calls.clear();
    const fh = await fs.open('/d', 0);
    expect(mem.calls.get('head')).toBe(1);
    expect(mem.calls.get('get')).toBeGreaterThan(0);
    const asked = mem.calls.get('get');
    expect((await readOpened(fs, fh)).equals(d)).toBe(true);
    // All of the 40 MiB file was within the window asked for at the open.
    expect(mem.calls.get('get')).toBe(asked);
    expect(fs.nextFile.taken).toBe(1);
    expect(fs.memoryInUse).toBe(0);
  });

  it('once a guess was taken, reaches as far into the next file as the window reaches past the end', async () => {
    const { mem, fs, d } = await guessedBig(randomBytes(40 * MiB));
    const e = mem.objects.get('e')!.body;
    expect((await readFile(fs, '/d')).equals(d)).toBe(true);
    // Read to its end, /d left a 64 MiB window past it: all of /e is asked for.
    expect(fs.nextFile.guessedUpTo('/e')).toBe(40 * MiB);
    mem.calls.clear();
    const fh = await fs.open('/e', 0);
    expect((await readOpened(fs, fh)).equals(e)).toBe(true);
    expect(mem.calls.get('head')).toBe(1);
    expect(mem.calls.get('get')).toBeUndefined();
    expect(fs.memoryInUse).toBe(0);
  });

  it('gives up the guess and the rest of the window when the object changed before the open', async () => {
    const { mem, fs } = await guessedBig();
    const replaced = randomBytes(40 * MiB);
    await mem.put('d', replaced);
    expect((await readFile(fs, '/d')).equals(replaced)).toBe(true);
    expect(fs.nextFile.taken).toBe(0);
    expect(fs.memoryInUse).toBe(0);
  });

  it('does not use what it fetched when the object changed before the open', async () => {
    const { mem, fs } = await readThree();
    const replaced = randomBytes(6 * MiB + 3);
    await mem.put('d', replaced);
    expect((await readFile(fs, '/d')).equals(replaced)).toBe(true);
    expect(fs.nextFile.taken).toBe(0);
    expect(fs.memoryInUse).toBe(0);
  });

  it('finds the next file of a walk without passing over the listing again, in either order', async () => {
    const mem = new MemoryObjectClient();
    const names = Array.from({ length: 40 }, (_, i) => `f${String(i).padStart(2, '0')}`);
    for (const n of names) await mem.put(n, randomBytes(1024));
    const fs = await makeFs(mem);
    await fs.readdir('/');
    // Counts the passes over the cached listing: a walk of n files must not make n of them.
    const listing = (fs as unknown as { cache: { listing(p: string): Map<string, unknown> } }).cache.listing('/')!;
    let passes = 0;
    const iterate = listing[Symbol.iterator].bind(listing);
    listing[Symbol.iterator] = () => {
      passes++;
      return iterate();
    };
    const byInode = [...names].sort((x, y) => fs.inodeOf(`/${x}`, 'file') - fs.inodeOf(`/${y}`, 'file'));
    for (const n of [...names, ...byInode]) await readFile(fs, `/${n}`);
    expect(fs.nextFile.made).toBeGreaterThan(60);
    expect(passes).toBeLessThanOrEqual(4);
  });

  it('drops the guess when this mount renames another file over that name', async () => {
    const { fs } = await readThree();
    const other = randomBytes(6 * MiB + 3);
    await writeFile(fs, '/x', other);
    await fs.rename('/x', '/d');
    expect(fs.nextFile.guessedUpTo('/d')).toBeUndefined();
    expect((await readFile(fs, '/d')).equals(other)).toBe(true);
    expect(fs.nextFile.taken).toBe(0);
    expect(fs.memoryInUse).toBe(0);
  });

  it('makes no guess of a file listed without an ETag', async () => {
    const mem = new MemoryObjectClient();
    for (const n of ['a', 'b', 'c', 'd']) await mem.put(n, randomBytes(3 * MiB));
    mem.objects.get('d')!.etag = '';
    const fs = await makeFs(mem);
    await fs.readdir('/');
    for (const n of ['/a', '/b', '/c']) await readFile(fs, n);
    expect(fs.nextFile.made).toBe(0);
  });

  it('asks again, of the version opened, for readahead a guess fetched of another version', async () => {
    const mem = new MemoryObjectClient();
    for (const n of ['a', 'b', 'c']) await mem.put(n, randomBytes(3 * MiB));
    const d = randomBytes(40 * MiB);
    await mem.put('d', d);
    // The object was replaced and put back (A, B, A) while the guess's GETs were under way: one
    // of them met B and failed.
    const faults = new FaultInjectingClient(mem);
    faults.fail('get', 'changed', 1, 'd');
    const fs = await makeFs(faults, { maxReadahead: 64 * MiB, initialReadahead: 64 * MiB, memoryLimit: 128 * MiB });
    await fs.readdir('/');
    for (const n of ['/a', '/b', '/c']) await readFile(fs, n);
    expect(fs.nextFile.guessedUpTo('/d')).toBe(17 * MiB);
    expect((await readFile(fs, '/d')).equals(d)).toBe(true);
    expect(fs.nextFile.taken).toBe(1);
    expect(fs.memoryInUse).toBe(0);
  });

  it('drops the guess when this mount writes that name, and gives its memory back', async () => {
    const { fs } = await readThree();
    expect(fs.memoryInUse).toBeGreaterThan(0);
    const mine = randomBytes(2 * MiB);
    await writeFile(fs, '/d', mine);
    expect((await readFile(fs, '/d')).equals(mine)).toBe(true);
    expect(fs.nextFile.taken).toBe(0);
    expect(fs.memoryInUse).toBe(0);
  });

  it('keeps one guess per reader when two copy side by side', async () => {
    const mem = new MemoryObjectClient();
    for (const dir of ['x', 'y']) for (const n of ['a', 'b', 'c', 'd']) await mem.put(`${dir}/${n}`, randomBytes(2 * MiB));
    const fs = await makeFs(mem);
    await fs.readdir('/x');
    await fs.readdir('/y');
    for (const n of ['a', 'b', 'c']) for (const dir of ['x', 'y']) await readFile(fs, `/${dir}/${n}`);
    expect((await readFile(fs, '/x/d')).equals(mem.objects.get('x/d')!.body)).toBe(true);
    expect((await readFile(fs, '/y/d')).equals(mem.objects.get('y/d')!.body)).toBe(true);
    expect(fs.nextFile.taken).toBe(4); // x/c, y/c, x/d and y/d
    expect(fs.memoryInUse).toBe(0);
  });

  it('makes no guess for a reader that seeks', async () => {
    const { fs } = await afterTwoWholeReads(3 * MiB);
    const fh = await fs.open('/c', 0);
    await fs.read(fh, 2 * MiB, 4096);
    await fs.read(fh, 3 * MiB - 4096, 4096);
    await fs.release(fh);
    expect(fs.nextFile.made).toBe(0);
  });
});

describe('listing ahead of a directory walker', () => {
  /** /t holding d00…d19 of three files each, and a file among them. */
  async function tree(): Promise<MemoryObjectClient> {
    const mem = new MemoryObjectClient();
    for (let d = 0; d < 20; d++)
      for (const f of ['a', 'b', 'c']) await mem.put(`t/d${String(d).padStart(2, '0')}/${f}`, Buffer.from(f));
    await mem.put('t/file', Buffer.from('x'));
    return mem;
  }
  const names = async (fs: Filesystem, path: string) => (await fs.readdir(path)).map((e) => e.name).sort();

  it('lists the next subdirectories while one is read, so a walk lists each directory once', async () => {
    const mem = await tree();
    const fs = await makeFs(mem);
    await fs.readdir('/');
    await fs.readdir('/t');
    mem.calls.clear();
    expect(await names(fs, '/t/d00')).toEqual(['a', 'b', 'c']);
    // d00's own LIST, and d01…d08 asked for at once.
    expect(mem.calls.get('list')).toBe(1 + 8);
    for (let d = 1; d < 20; d++) expect(await names(fs, `/t/d${String(d).padStart(2, '0')}`)).toEqual(['a', 'b', 'c']);
    expect(mem.calls.get('list')).toBe(20);
    expect(mem.calls.get('head')).toBeUndefined();
  });

  it('drops a listing asked for ahead when this mount changed something while it travelled', async () => {
    const mem = await tree();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const slow = Object.create(mem) as MemoryObjectClient;
    // LISTs of d01 answer with what the bucket held when they were sent, but only once let through.
    slow.list = (prefix, options) => {
      const page = mem.list(prefix, options);
      return prefix === 't/d01/' ? gate.then(() => page) : page;
    };
    const fs = await makeFs(slow);
    await fs.readdir('/');
    await fs.readdir('/t');
    await fs.readdir('/t/d00');
    await writeFile(fs, '/t/d01/new', Buffer.from('mine'));
    open();
    expect(await names(fs, '/t/d01')).toEqual(['a', 'b', 'c', 'new']);
  });

  it('leaves a directory larger than one page to the readdir that needs it', async () => {
    const mem = await tree();
    for (let i = 0; i < 1001; i++) await mem.put(`t/d01/many${i}`, Buffer.alloc(0));
    const fs = await makeFs(mem);
    await fs.readdir('/');
    await fs.readdir('/t');
    await fs.readdir('/t/d00');
    expect((await fs.readdir('/t/d01')).length).toBe(1004);
  });

  it('does not list ahead for a directory listed on its own', async () => {
    const mem = await tree();
    const fs = await makeFs(mem);
    await fs.getattr('/t/d05');
    mem.calls.clear();
    await fs.readdir('/t/d05');
    expect(mem.calls.get('list')).toBe(1);
  });
});

describe('memory budget', () => {
  it('lets writers finish while an idle reader holds readahead', async () => {
    const mem = new MemoryObjectClient();
    await mem.put('big', randomBytes(64 * MiB));
    const fs = await makeFs(mem, { memoryLimit: 24 * MiB, maxReadahead: 64 * MiB, memoryWaitMs: 60_000 });
    const reader = await fs.open('/big', 0);
    for (let at = 0; at < 16 * MiB; at += 128 * 1024) await fs.read(reader, at, 128 * 1024);
    expect(fs.memoryInUse).toBeLessThanOrEqual(18 * MiB);
    const data = randomBytes(21 * MiB);
    await writeFile(fs, '/w', data);
    expect(mem.objects.get('w')?.body.equals(data)).toBe(true);
    await fs.release(reader);
    expect(fs.memoryInUse).toBe(0);
  });
});

describe('names and directories', () => {
  it('lists with one request and answers ls -l from the listing', async () => {
    const mem = new MemoryObjectClient();
    for (let i = 0; i < 50; i++) await mem.put(`dir/f${i}`, Buffer.alloc(i));
    await mem.put('dir/sub/x', Buffer.from('x'));
    const fs = await makeFs(mem);
    await fs.getattr('/dir');
    mem.calls.clear();
    const entries = await fs.readdir('/dir');
    expect(entries).toHaveLength(51);
    for (const e of entries) await fs.getattr(`/dir/${e.name}`);
    expect(await errnoOf(fs.getattr('/dir/nothing'))).toBe('ENOENT');
    expect(mem.calls.get('list')).toBe(1);
    expect(mem.calls.get('head')).toBeUndefined();
    expect((await fs.getattr('/dir/f7')).size).toBe(7);
    expect((await fs.getattr('/dir/sub')).kind).toBe('dir');
  });

  it('shows implicit directories, an object beside a directory of its name under a stand-in, and stand-ins for unnamable keys', async () => {
    const mem = new MemoryObjectClient();
    await mem.put('a/b/c', Buffer.from('c'));
    await mem.put('x', Buffer.from('file'));
    await mem.put('x/y', Buffer.from('y'));
    await mem.put('w//z', Buffer.from('z'));
    await mem.put('bad\uDCFFname', Buffer.from('z'));
    const fs = await makeFs(mem);
    expect((await fs.getattr('/a/b')).kind).toBe('dir');
    expect((await fs.getattr('/x')).kind).toBe('dir');
    const root = (await fs.readdir('/')).map((e) => `${e.name}:${e.attr.kind}`).sort();
    // The object `x` is not hidden by the directory `x/`: it has a stand-in (the naming rule).
    expect(root).toEqual(['a:dir', `${standInName('x')}:file`, 'w:dir', 'x:dir']);
    expect((await readFile(fs, `/${standInName('x')}`)).toString()).toBe('file');
    // `w//z` shows under a stand-in for its empty component (posix.test.ts has the rest).
    expect((await fs.readdir('/w')).map((e) => e.name)).toEqual([standInName('w//')]);
  });

  it('makes and removes directories, refusing non-empty ones', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem);
    await fs.mkdir('/d', 0o750);
    expect(mem.objects.get('d/')?.contentType).toBe('application/x-directory');
    expect(await errnoOf(fs.mkdir('/d', 0o750))).toBe('EEXIST');
    await writeFile(fs, '/d/f', Buffer.from('1'));
    expect(await errnoOf(fs.rmdir('/d'))).toBe('ENOTEMPTY');
    await fs.unlink('/d/f');
    await fs.rmdir('/d');
    expect(await errnoOf(fs.getattr('/d'))).toBe('ENOENT');
    expect(await errnoOf(fs.mkdir('/nope/x', 0o755))).toBe('ENOENT');
    expect(await errnoOf(fs.create(`/${'n'.repeat(256)}`, 0o644))).toBe('ENAMETOOLONG');
  });

  it('renames files and directories, and refuses big directory renames with EXDEV', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem, { renameDirLimit: 5 });
    await writeFile(fs, '/one', Buffer.from('1'));
    await fs.rename('/one', '/two');
    expect(mem.objects.has('one')).toBe(false);
    expect(mem.objects.get('two')?.body.toString()).toBe('1');
    await fs.mkdir('/src', 0o755);
    await writeFile(fs, '/src/a', Buffer.from('a'));
    await fs.mkdir('/src/deep', 0o755);
    await writeFile(fs, '/src/deep/b', Buffer.from('b'));
    await fs.rename('/src', '/dst');
    expect([...mem.objects.keys()].sort()).toEqual(['dst/', 'dst/a', 'dst/deep/', 'dst/deep/b', 'two']);
    expect((await readFile(fs, '/dst/deep/b')).toString()).toBe('b');
    expect(await errnoOf(fs.getattr('/src'))).toBe('ENOENT');
    for (let i = 0; i < 6; i++) await writeFile(fs, `/dst/n${i}`, Buffer.from('n'));
    expect(await errnoOf(fs.rename('/dst', '/elsewhere'))).toBe('EXDEV');
  });

  it('says a directory rename left both names when its originals could not be deleted', async () => {
    const mem = new MemoryObjectClient();
    const faults = new FaultInjectingClient(mem);
    const fs = await makeFs(faults);
    await fs.mkdir('/src', 0o755);
    await writeFile(fs, '/src/a', Buffer.from('a'));
    faults.fail('deleteMany', 'other');
    const err = await fs.rename('/src', '/dst').then(() => undefined, (e: unknown) => e);
    expect(err).toMatchObject({ errno: 'EIO', message: expect.stringMatching(/\/src was copied to \/dst .* both hold it/) });
    expect([...mem.objects.keys()].sort()).toEqual(['dst/', 'dst/a', 'src/', 'src/a']);
    expect((await readFile(fs, '/dst/a')).toString()).toBe('a');
  });

  it('refuses a symlink object of PATH_MAX bytes or more with ENAMETOOLONG, reading at most 4096 bytes', async () => {
    const mem = new MemoryObjectClient();
    const link = { metadata: { mode: String(S_IFLNK | 0o777) } };
    await mem.put('longest', Buffer.alloc(4095, 'a'), link);
    await mem.put('huge', Buffer.alloc(8 * MiB, 'a'), link);
    const fs = await makeFs(mem);
    expect(await fs.readlink('/longest')).toBe('a'.repeat(4095));
    expect(await errnoOf(fs.readlink('/huge'))).toBe('ENAMETOOLONG');
    // Listed small, grown since: the GET asks for 4096 bytes and sees the object's size.
    await fs.getattr('/longest');
    await mem.put('longest', Buffer.alloc(8 * MiB, 'a'), link);
    const asked: (ByteRange | undefined)[] = [];
    const getWithHead = mem.getWithHead.bind(mem);
    mem.getWithHead = (key, range) => (asked.push(range), getWithHead(key, range));
    expect(await errnoOf(fs.readlink('/longest'))).toBe('ENAMETOOLONG');
    expect(asked).toEqual([{ start: 0, end: 4096 }]);
  });

  it('keeps symlinks, modes, owners and times in s3fs metadata', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem);
    await fs.symlink('../target', '/link');
    expect(mem.objects.get('link')?.metadata.mode).toBe(String(S_IFLNK | 0o777));
    expect(await fs.readlink('/link')).toBe('../target');
    await writeFile(fs, '/m', Buffer.from('m'));
    await fs.chmod('/m', 0o755);
    await fs.chown('/m', 42, 43);
    await fs.utimens('/m', 0, 1_600_000_000_000);
    expect(mem.objects.get('m')?.metadata).toMatchObject({
      mode: String(0o100755),
      uid: '42',
      gid: '43',
      mtime: '1600000000',
    });
    expect(mem.objects.get('m')?.body.toString()).toBe('m');
    const fresh = await makeFs(mem);
    expect(await fresh.getattr('/m')).toMatchObject({
      perm: 0o755,
      uid: 42,
      gid: 43,
      mtimeMs: 1_600_000_000_000,
    });
    expect((await fresh.getattr('/link')).kind).toBe('symlink');
  });

  it('keeps a chmod and an mtime set while a multipart upload is under way (cp -p)', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem);
    const data = randomBytes(24 * MiB);
    const fh = await fs.create('/p', 0o644);
    for (let at = 0; at < data.length; at += 128 * 1024) {
      await fs.write(fh, data.subarray(at, at + 128 * 1024), at);
    }
    expect(mem.calls.get('createMultipart')).toBe(1);
    await fs.chmod('/p', 0o600);
    await fs.utimens('/p', 0, 1_500_000_000_000);
    await fs.flush(fh);
    await fs.release(fh);
    const stored = mem.objects.get('p');
    expect(stored?.body.equals(data)).toBe(true);
    expect(stored?.metadata).toMatchObject({ mode: String(0o100600), mtime: '1500000000' });
    const fresh = await makeFs(mem);
    expect(await fresh.getattr('/p')).toMatchObject({ perm: 0o600, mtimeMs: 1_500_000_000_000, size: data.length });
  });

  it('leaves a written file its Last-Modified as mtime, so a long multipart upload is never copied', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const mem = new MemoryObjectClient();
      const fs = await makeFs(mem);
      const data = randomBytes(24 * MiB);
      const fh = await fs.create('/slow', 0o644);
      for (let at = 0; at < data.length; at += 128 * 1024) {
        await fs.write(fh, data.subarray(at, at + 128 * 1024), at);
        vi.advanceTimersByTime(50); // the writes span seconds, as a big cp's do
      }
      await fs.flush(fh);
      await fs.release(fh);
      expect(mem.calls.get('createMultipart')).toBe(1);
      expect(mem.calls.get('copy')).toBeUndefined();
      expect(mem.calls.get('uploadPartCopy')).toBeUndefined();
      const stored = mem.objects.get('slow');
      expect(stored?.body.equals(data)).toBe(true);
      expect(stored?.metadata.mtime).toBeUndefined();
      const fresh = await makeFs(mem);
      expect((await fresh.getattr('/slow')).mtimeMs).toBe(stored?.lastModified.getTime());
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses every change on a read-only mount with EROFS', async () => {
    const mem = new MemoryObjectClient();
    await mem.put('f', Buffer.from('x'));
    const fs = await makeFs(mem, { readOnly: true });
    expect(await errnoOf(fs.create('/n', 0o644))).toBe('EROFS');
    expect(await errnoOf(fs.open('/f', 1))).toBe('EROFS');
    expect(await errnoOf(fs.unlink('/f'))).toBe('EROFS');
    expect(await errnoOf(fs.mkdir('/d', 0o755))).toBe('EROFS');
    expect((await readFile(fs, '/f')).toString()).toBe('x');
  });
});

describe('failures reach the writer', () => {
  it('turns a failed part upload into EIO at close, leaving no object', async () => {
    const mem = new MemoryObjectClient();
    const faults = new FaultInjectingClient(mem);
    const fs = await makeFs(faults);
    faults.fail('uploadPart', 'unavailable', 1);
    const fh = await fs.create('/lost', 0o644);
    let err: string | undefined;
    try {
      for (let at = 0; at < 24 * MiB; at += MiB) await fs.write(fh, randomBytes(MiB), at);
    } catch (e) {
      err = toErrno(e);
    }
    err ??= await errnoOf(fs.flush(fh));
    await fs.release(fh).catch(() => undefined);
    expect(err).toBe('EIO');
    expect(mem.objects.has('lost')).toBe(false);
  });

  it('turns a failed PUT into EIO from fsync and close', async () => {
    const mem = new MemoryObjectClient();
    const faults = new FaultInjectingClient(mem);
    const fs = await makeFs(faults);
    faults.fail('put', 'throttled', 2);
    const fh = await fs.create('/slow', 0o644);
    await fs.write(fh, Buffer.from('data'), 0);
    expect(await errnoOf(fs.fsync(fh))).toBe('EIO');
    // The data is still held: a later flush, once the store answers, saves it.
    expect(await errnoOf(fs.flush(fh))).toBe('EIO');
    expect(await errnoOf(fs.flush(fh))).toBeUndefined();
    await fs.release(fh);
    expect(mem.objects.get('slow')?.body.toString()).toBe('data');
  });

  it('reports an unreachable store on lookups as EIO and a denied one as EACCES', async () => {
    const faults = new FaultInjectingClient(new MemoryObjectClient());
    const fs = await makeFs(faults, { cacheTtlMs: 0 });
    faults.fail('head', 'unavailable', 1);
    expect(await errnoOf(fs.getattr('/x'))).toBe('EIO');
    faults.fail('list', 'access-denied', 1);
    expect(await errnoOf(fs.getattr('/x'))).toBe('EACCES');
    expect(await errnoOf(fs.getattr('/x'))).toBe('ENOENT');
    expect(new FsError('EIO')).toBeInstanceOf(Error);
  });
});
