// POSIX behaviour a local filesystem gives and programs count on, beyond reading and writing:
// open files outliving their names, sizes past what the mount can hold.

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { toErrno } from '../../../fuse/fs/errno.ts';
import { MemoryObjectClient } from '../../../fuse/s3/memory-client.ts';
import { MiB, makeFs, readOpened, writeFile } from './make-fs.ts';

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
