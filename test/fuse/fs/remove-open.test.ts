// Removing a file while a descriptor writes it: the removal is what the bucket answered. A removal
// the store refused (an unlink, libfuse's hiding rename, a rename over the file) leaves the writer
// writing the file, and its close publishes everything; a removal that went through leaves nothing
// that a close could bring back, even when the close was sent while the DELETE was under way.

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { toErrno } from '../../../fuse/fs/errno.ts';
import type { Filesystem } from '../../../fuse/fs/filesystem.ts';
import { FaultInjectingClient } from '../../../fuse/s3/fault-client.ts';
import { MemoryObjectClient } from '../../../fuse/s3/memory-client.ts';
import { MiB, makeFs, readFile } from './make-fs.ts';

async function errnoOf(p: Promise<unknown>): Promise<string | undefined> {
  return p.then(
    () => undefined,
    (e: unknown) => toErrno(e),
  );
}

async function faultyFs(): Promise<{ mem: MemoryObjectClient; faults: FaultInjectingClient; fs: Filesystem }> {
  const mem = new MemoryObjectClient();
  const faults = new FaultInjectingClient(mem);
  return { mem, faults, fs: await makeFs(faults) };
}

/** A store whose DELETEs wait until `open` is called. */
class GatedDeletes extends MemoryObjectClient {
  private gate: Promise<void> = Promise.resolve();
  private release: () => void = () => {};
  waiting = 0;

  close(): void {
    this.gate = new Promise((r) => {
      this.release = r;
    });
  }

  open(): void {
    this.release();
  }

  override async delete(key: string): Promise<void> {
    this.waiting += 1;
    await this.gate;
    this.waiting -= 1;
    return super.delete(key);
  }
}

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 2));
  expect(cond()).toBe(true);
}

async function writeAt(fs: Filesystem, fh: number, data: Buffer, at: number): Promise<void> {
  for (let o = 0; o < data.length; o += 128 * 1024) await fs.write(fh, data.subarray(o, o + 128 * 1024), at + o);
}

type Removal = (fs: Filesystem, path: string) => Promise<void>;

const removals: [string, Removal][] = [
  ['unlink', (fs, path) => fs.unlink(path)],
  ["libfuse's hiding rename", (fs, path) => fs.rename(path, '/.fuse_hidden0000000100000001', true)],
];

// Sizes: under the first part (held in memory), and past it (parts already sent).
const sizes = [64 * 1024, 7 * MiB];

describe('a removal of a file open for writing, refused by the store', () => {
  for (const [name, remove] of removals) {
    for (const size of sizes) {
      it(`${name} after ${size} bytes: the writer goes on and its close publishes everything`, async () => {
        const mem = new MemoryObjectClient();
        const faults = new FaultInjectingClient(mem);
        const fs = await makeFs(faults);
        const first = randomBytes(size);
        const rest = randomBytes(100_000);
        const fh = await fs.create('/kept', 0o644);
        await writeAt(fs, fh, first, 0);
        faults.fail('delete', 'unavailable', Number.POSITIVE_INFINITY);
        expect(await errnoOf(remove(fs, '/kept'))).toBe('EIO');
        faults.clear();
        await writeAt(fs, fh, rest, size);
        expect(await errnoOf(fs.flush(fh))).toBeUndefined();
        await fs.release(fh);
        expect(mem.objects.get('kept')?.body.equals(Buffer.concat([first, rest]))).toBe(true);
        expect((await fs.readdir('/')).map((e) => e.name)).toContain('kept');
      });
    }
  }

  it('unlink of a published file reopened for writing: the rewrite is published', async () => {
    const { mem, faults, fs } = await faultyFs();
    const fh0 = await fs.create('/f', 0o644);
    await fs.write(fh0, Buffer.from('old old old'), 0);
    await fs.release(fh0);
    const fh = await fs.open('/f', 1);
    await fs.write(fh, Buffer.from('new'), 0);
    faults.fail('delete', 'unavailable', Number.POSITIVE_INFINITY);
    expect(await errnoOf(fs.unlink('/f'))).toBe('EIO');
    faults.clear();
    await fs.release(fh);
    expect(mem.objects.get('f')?.body.toString()).toBe('new old old');
  });

  it('rm of a file renamed away while written, whose old name the store will not delete: nothing changes', async () => {
    const { mem, faults, fs } = await faultyFs();
    const fh = await fs.create('/a', 0o644);
    await fs.write(fh, Buffer.from('AAAA'), 0);
    await fs.fsync(fh);
    await fs.write(fh, Buffer.from('BBBB'), 4);
    await fs.rename('/a', '/b');
    faults.fail('delete', 'access-denied', Number.POSITIVE_INFINITY, 'a');
    expect(await errnoOf(fs.unlink('/b'))).toBe('EACCES');
    expect((await fs.readdir('/')).map((e) => e.name)).toEqual(['b']);
    faults.clear();
    await fs.write(fh, Buffer.from('CCCC'), 8);
    await fs.release(fh);
    expect([...mem.objects.keys()]).toEqual(['b']);
    expect(mem.objects.get('b')?.body.toString()).toBe('AAAABBBBCCCC');
  });

  it('a DELETE carried out but answered with an error: the close of a writer with nothing unsaved publishes it again', async () => {
    const { mem, fs } = await faultyFs();
    const fh = await fs.create('/f', 0o644);
    await fs.write(fh, Buffer.from('published'), 0);
    await fs.fsync(fh);
    const remove = mem.delete.bind(mem);
    mem.delete = async (key: string) => {
      await remove(key);
      throw new Error('the answer was lost');
    };
    expect(await errnoOf(fs.unlink('/f'))).toBe('EIO');
    mem.delete = remove;
    expect(mem.objects.has('f')).toBe(false);
    await fs.release(fh);
    expect(mem.objects.get('f')?.body.toString()).toBe('published');
  });

  it('a rename over the file that fails: the writer of the file renamed over publishes it', async () => {
    const { mem, faults, fs } = await faultyFs();
    await mem.put('src', Buffer.from('source'));
    const fh = await fs.create('/dst', 0o644);
    await fs.write(fh, Buffer.from('written'), 0);
    await fs.fsync(fh);
    await fs.write(fh, Buffer.from(' and more'), 7);
    faults.fail('copy', 'unavailable', Number.POSITIVE_INFINITY);
    expect(await errnoOf(fs.rename('/src', '/dst'))).toBe('EIO');
    faults.clear();
    await fs.release(fh);
    expect(mem.objects.get('dst')?.body.toString()).toBe('written and more');
    expect(mem.objects.get('src')?.body.toString()).toBe('source');
  });
});

describe('a removal of a file open for writing, taken by the store', () => {
  for (const [name, remove] of removals) {
    it(`${name}: a close sent while the DELETE is under way publishes nothing`, async () => {
      const mem = new GatedDeletes();
      const fs = await makeFs(mem);
      const fh = await fs.create('/gone', 0o644);
      await fs.write(fh, Buffer.from('short-lived'), 0);
      mem.close();
      const removing = remove(fs, '/gone');
      await until(() => mem.waiting > 0);
      const closing = fs.flush(fh);
      await new Promise((r) => setTimeout(r, 20));
      mem.open();
      await removing;
      expect(await errnoOf(closing)).toBeUndefined();
      // The descriptor still reads what it wrote, as POSIX keeps an unlinked file's.
      expect((await fs.read(fh, 0, 100)).toString()).toBe('short-lived');
      await fs.release(fh);
      expect([...mem.objects.keys()]).toEqual([]);
    });
  }
});

// A rename over an open file reaches the filesystem as two renames of one kernel request:
// libfuse's hide of the target, then the rename (the patched addon tells the request).
describe('a rename over an open file whose copy fails after libfuse hid that file', () => {
  const HIDDEN = '/.fuse_hidden00000000000000a1';

  it('the writer of the file renamed over goes on, and its close publishes it', async () => {
    const { mem, faults, fs } = await faultyFs();
    await mem.put('s', Buffer.from('source'));
    const fh = await fs.create('/t', 0o644);
    await fs.write(fh, Buffer.from('written'), 0);
    await fs.fsync(fh);
    await fs.write(fh, Buffer.from(' and more'), 7);
    await fs.rename('/t', HIDDEN, true, 41);
    faults.fail('copy', 'access-denied', Number.POSITIVE_INFINITY);
    expect(await errnoOf(fs.rename('/s', '/t', false, 41))).toBe('EACCES');
    faults.clear();
    expect((await fs.getattr('/t')).size).toBe(16);
    await fs.write(fh, Buffer.from('!'), 16);
    await fs.release(fh);
    // libfuse unlinks the hidden name after the last close: only that name ends.
    await fs.unlink(HIDDEN);
    expect(mem.objects.get('t')?.body.toString()).toBe('written and more!');
    expect(mem.objects.get('s')?.body.toString()).toBe('source');
  });

  it('a file only read: its reader\'s copy is put back at once', async () => {
    const { mem, faults, fs } = await faultyFs();
    await mem.put('s', Buffer.from('source'));
    await mem.put('t', Buffer.from('target kept'));
    const fh = await fs.open('/t', 0);
    await fs.rename('/t', HIDDEN, true, 42);
    faults.fail('copy', 'unavailable', Number.POSITIVE_INFINITY);
    expect(await errnoOf(fs.rename('/s', '/t', false, 42))).toBe('EIO');
    faults.clear();
    expect(mem.objects.get('t')?.body.toString()).toBe('target kept');
    expect((await readFile(fs, '/t')).toString()).toBe('target kept');
    // Through the kernel's cached entry, libfuse still names it by the hidden name: that is the file.
    expect((await fs.getattr(HIDDEN)).size).toBe(11);
    expect((await readFile(fs, HIDDEN)).toString()).toBe('target kept');
    await fs.chmod(HIDDEN, 0o600);
    expect((await fs.getattr('/t')).perm).toBe(0o600);
    expect(await errnoOf(fs.rename(HIDDEN, '/elsewhere'))).toBe('ENOENT');
    await fs.release(fh);
    await fs.unlink(HIDDEN);
    expect(mem.objects.get('t')?.body.toString()).toBe('target kept');
  });

  it('without the request (fuse-native not rebuilt): the file renamed over stays removed, as documented', async () => {
    const { mem, faults, fs } = await faultyFs();
    await mem.put('s', Buffer.from('source'));
    await mem.put('t', Buffer.from('target'));
    const fh = await fs.open('/t', 0);
    await fs.rename('/t', HIDDEN);
    faults.fail('copy', 'unavailable', Number.POSITIVE_INFINITY);
    expect(await errnoOf(fs.rename('/s', '/t'))).toBe('EIO');
    faults.clear();
    expect([...mem.objects.keys()]).toEqual(['s']);
    expect(await errnoOf(fs.getattr('/t'))).toBe('ENOENT');
    // Its reader still reads what it opened.
    expect((await fs.read(fh, 0, 100)).toString()).toBe('target');
    await fs.release(fh);
    await fs.unlink(HIDDEN);
    expect([...mem.objects.keys()]).toEqual(['s']);
  });

  it("an unlink's hide, then a user's rename in another request that fails: the file stays removed", async () => {
    const { mem, faults, fs } = await faultyFs();
    await mem.put('s', Buffer.from('source'));
    const fh = await fs.create('/t', 0o644);
    await fs.write(fh, Buffer.from('removed'), 0);
    await fs.rename('/t', HIDDEN, true, 43);
    faults.fail('copy', 'unavailable', Number.POSITIVE_INFINITY);
    expect(await errnoOf(fs.rename('/s', '/t', false, 44))).toBe('EIO');
    faults.clear();
    await fs.release(fh);
    await fs.unlink(HIDDEN);
    expect([...mem.objects.keys()]).toEqual(['s']);
  });
});
