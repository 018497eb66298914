// Attacks on a file unlinked while open for writing, and on the append that goes on after a flush
// without a local copy, on the filesystem layer over the in-memory client. docs/SEMANTICS.md,
// "unlink.": a file unlinked while open for writing stays readable and writable through its
// descriptors until close, and is not recreated when it is closed.

import { afterAll, describe, expect, it } from 'vitest';
import { MemoryObjectClient } from '../../../fuse/s3/memory-client.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { MiB, makeFs, readFile, writeFile } from '../fs/make-fs.ts';

afterAll(runTeardowns);

const pattern = (n: number, seed: number) => {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
};

describe('unlinked while open for writing', () => {
  it('an append streamed after a flush without a local copy stays writable and readable after unlink', async () => {
    // Past --staging-limit the flush keeps no copy, so the append goes on as a stream whose
    // leading parts are copied within the bucket. The unlink deletes the object those copies
    // come from: later writes must still be taken (SEMANTICS "unlink.": "stays readable and
    // writable through its descriptors until then"), close must not fail, nothing must remain.
    const client = new MemoryObjectClient();
    const fs = await makeFs(client, { stagingLimit: 6 * MiB });
    const fh = await fs.create('/tmp.bin', 0o600);
    const first = pattern(20 * MiB, 1);
    for (let at = 0; at < first.length; at += MiB) await fs.write(fh, first.subarray(at, at + MiB), at);
    await fs.flush(fh);
    expect(client.objects.get('tmp.bin')?.body.length).toBe(20 * MiB);
    // The append right after the flush: a stream after the published bytes.
    await fs.write(fh, Buffer.from("more"), 20 * MiB);
    await fs.unlink('/tmp.bin');
    let writeErr: unknown;
    try {
      for (let i = 0; i < 8; i++) await fs.write(fh, pattern(MiB, i), 20 * MiB + 4 + i * MiB);
    } catch (err) {
      writeErr = err;
    }
    expect(String(writeErr ?? 'no error')).toBe('no error');
    await fs.flush(fh);
    await fs.release(fh);
    expect([...client.objects.keys()]).toEqual([]);
    expect(client.uploads.size).toBe(0);
    await fs.stop();
  });

  it('mkstemp pattern: write, unlink, seek back and read, ftruncate, write more, close', async () => {
    const client = new MemoryObjectClient();
    const fs = await makeFs(client);
    const fh = await fs.create('/tmpXXXXXX', 0o600);
    const data = pattern(7 * MiB, 3);
    for (let at = 0; at < data.length; at += 128 * 1024) await fs.write(fh, data.subarray(at, at + 128 * 1024), at);
    await fs.unlink('/tmpXXXXXX');
    expect((await fs.read(fh, 6 * MiB, 100)).equals(data.subarray(6 * MiB, 6 * MiB + 100))).toBe(true);
    await fs.ftruncate(fh, MiB);
    await fs.write(fh, Buffer.from('tail'), 2 * MiB);
    const back = await fs.read(fh, MiB - 4, 8 + MiB);
    expect(back.length).toBe(MiB + 8);
    expect(back.subarray(0, 4).equals(data.subarray(MiB - 4, MiB))).toBe(true);
    expect(back.subarray(back.length - 4).toString()).toBe('tail');
    await fs.fsync(fh);
    expect([...client.objects.keys()]).toEqual([]);
    await fs.release(fh);
    expect([...client.objects.keys()]).toEqual([]);
    expect(client.uploads.size).toBe(0);
    await fs.stop();
  });

  it('the same name recreated while the unlinked file is open is untouched by the old close', async () => {
    const client = new MemoryObjectClient();
    const fs = await makeFs(client);
    await writeFile(fs, '/f', pattern(3 * MiB, 5));
    const old = await fs.open('/f', 2);
    await fs.write(old, Buffer.from('old'), 3 * MiB);
    await fs.unlink('/f');
    await writeFile(fs, '/f', Buffer.from('new content'));
    await fs.write(old, Buffer.from('still old'), 0);
    await fs.fsync(old);
    await fs.release(old);
    expect((await readFile(fs, '/f')).toString()).toBe('new content');
    expect(client.objects.get('f')?.body.toString()).toBe('new content');
    await fs.stop();
  });
});

describe('replaced or renamed while open for writing', () => {
  it('a rename over a file open for writing is not undone by that writer\'s close', async () => {
    // POSIX: rename(a, b) unlinks b's old inode; a descriptor still open on it writes into a file
    // that has no name any more. SEMANTICS "unlink." treats "replaced by a rename over it" as
    // removed: the writer's close must not put its bytes back under b.
    const client = new MemoryObjectClient();
    const fs = await makeFs(client);
    const fhB = await fs.create('/b', 0o644);
    await fs.write(fhB, Buffer.from('writer of b'), 0);
    await writeFile(fs, '/a', Buffer.from('renamed a'));
    await fs.rename('/a', '/b');
    await fs.write(fhB, Buffer.from(' more'), 11);
    await fs.flush(fhB);
    await fs.release(fhB);
    expect(client.objects.get('b')?.body.toString()).toBe('renamed a');
    expect((await readFile(fs, '/b')).toString()).toBe('renamed a');
    await fs.stop();
  });

  it('a rename over a flushed file still open for writing is not undone by its next append and close', async () => {
    const client = new MemoryObjectClient();
    const fs = await makeFs(client);
    const fhB = await fs.create('/b', 0o644);
    await fs.write(fhB, Buffer.from('writer of b'), 0);
    await fs.flush(fhB);
    await writeFile(fs, '/a', Buffer.from('renamed a'));
    await fs.rename('/a', '/b');
    await fs.write(fhB, Buffer.from(' more'), 11);
    await fs.flush(fhB);
    await fs.release(fhB);
    expect(client.objects.get('b')?.body.toString()).toBe('renamed a');
    await fs.stop();
  });
});

describe('write-back: unlinked while open for writing', () => {
  it('an unlinked file whose earlier close went to the journal is not recreated by the journal', async () => {
    const client = new MemoryObjectClient();
    const fs = await makeFs(client, { writeBack: true });
    const fh = await fs.create('/j', 0o644);
    await fs.write(fh, pattern(2 * MiB, 9), 0);
    await fs.flush(fh);
    await fs.unlink('/j');
    await fs.write(fh, Buffer.from('after unlink'), 2 * MiB);
    expect((await fs.read(fh, 0, 16)).equals(pattern(2 * MiB, 9).subarray(0, 16))).toBe(true);
    await fs.flush(fh);
    await fs.release(fh);
    await fs.journalSettled();
    expect([...client.objects.keys()]).toEqual([]);
    await fs.stop();
  });
});

describe('unlinked mid-upload', () => {
  it('parts in flight: reads and writes go on, close leaves no object and no multipart upload', async () => {
    const client = new MemoryObjectClient();
    const fs = await makeFs(client, { stagingLimit: 64 * MiB });
    const fh = await fs.create('/big', 0o600);
    const data = pattern(40 * MiB, 11);
    for (let at = 0; at < data.length; at += MiB) await fs.write(fh, data.subarray(at, at + MiB), at);
    await fs.unlink('/big');
    expect(client.objects.has('big')).toBe(false);
    await fs.fsync(fh);
    expect(client.objects.has('big')).toBe(false);
    await fs.write(fh, Buffer.from('end'), 40 * MiB);
    expect((await fs.read(fh, MiB, 64)).equals(data.subarray(MiB, MiB + 64))).toBe(true);
    expect((await fs.read(fh, 40 * MiB, 64)).toString()).toBe('end');
    await fs.release(fh);
    expect([...client.objects.keys()]).toEqual([]);
    expect(client.uploads.size).toBe(0);
    await fs.stop();
  });

  it('two descriptors and a reader: each keeps the content after unlink, nothing comes back', async () => {
    const client = new MemoryObjectClient();
    const fs = await makeFs(client);
    await writeFile(fs, '/two', pattern(MiB, 2));
    const w1 = await fs.open('/two', 2);
    const w2 = await fs.open('/two', 2);
    const r = await fs.open('/two', 0);
    await fs.write(w1, Buffer.from('w1'), MiB);
    await fs.unlink('/two');
    await fs.write(w2, Buffer.from('w2'), MiB + 2);
    await fs.flush(w1);
    await fs.release(w1);
    expect((await fs.read(w2, MiB, 4)).toString()).toBe('w1w2');
    expect((await fs.read(r, 0, 8)).equals(pattern(MiB, 2).subarray(0, 8))).toBe(true);
    await fs.flush(w2);
    await fs.release(w2);
    await fs.release(r);
    expect([...client.objects.keys()]).toEqual([]);
    await fs.stop();
  });
});

describe('metadata changes racing the append after a flush without a local copy', () => {
  it('chmod, touch and rename between the flush and the append keep the append going from their copy', async () => {
    const client = new MemoryObjectClient();
    const fs = await makeFs(client, { stagingLimit: 6 * MiB });
    const fh = await fs.create('/m', 0o644);
    const first = pattern(20 * MiB, 4);
    for (let at = 0; at < first.length; at += MiB) await fs.write(fh, first.subarray(at, at + MiB), at);
    await fs.flush(fh);
    await fs.chmod('/m', 0o600);
    await fs.utimens('/m', undefined, 1_700_000_000_000);
    await fs.rename('/m', '/n');
    await fs.write(fh, Buffer.from('appended'), 20 * MiB);
    await fs.chmod('/n', 0o640);
    await fs.write(fh, Buffer.from('!'), 20 * MiB + 8);
    await fs.flush(fh);
    await fs.release(fh);
    const body = client.objects.get('n')?.body;
    expect(body?.length).toBe(20 * MiB + 9);
    expect(body?.subarray(20 * MiB).toString()).toBe('appended!');
    expect(body?.subarray(0, 20 * MiB).equals(first)).toBe(true);
    expect(client.objects.has('m')).toBe(false);
    expect(((await fs.getattr('/n')).perm ?? 0) & 0o777).toBe(0o640);
    await fs.stop();
  });
});

describe('rm of an open file as the kernel sends it: a rename to .fuse_hidden, then unlink at release', () => {
  it('works while the append after a flush without a local copy streams', async () => {
    // Without hard_remove the kernel answers unlink(2) of an open file with a rename to
    // .fuse_hidden* and unlinks that at release. rm must succeed, and the writer go on
    // (SEMANTICS "unlink.": stays writable through its descriptors until close).
    const client = new MemoryObjectClient();
    const fs = await makeFs(client, { stagingLimit: 6 * MiB });
    const fh = await fs.create('/log', 0o644);
    const first = pattern(20 * MiB, 6);
    for (let at = 0; at < first.length; at += MiB) await fs.write(fh, first.subarray(at, at + MiB), at);
    await fs.flush(fh);
    await fs.write(fh, Buffer.from('appended'), 20 * MiB);
    let renameErr: unknown;
    await fs.rename('/log', '/.fuse_hidden0000000200000001').catch((err: unknown) => (renameErr = err));
    expect(String(renameErr ?? 'no error')).toBe('no error');
    await fs.write(fh, Buffer.from('!'), 20 * MiB + 8);
    await fs.flush(fh);
    await fs.release(fh);
    await fs.unlink('/.fuse_hidden0000000200000001');
    expect([...client.objects.keys()]).toEqual([]);
    expect(client.uploads.size).toBe(0);
    await fs.stop();
  });

  it('mkstemp, rm, write, close: the removed temp file is not uploaded under .fuse_hidden at close', async () => {
    // SEMANTICS "unlink.": a file unlinked while open for writing is not recreated when closed.
    // Through the kernel that unlink arrives as a rename to .fuse_hidden*, and its unlink only
    // after the release: the close in between must not upload the removed file.
    const client = new MemoryObjectClient();
    const fs = await makeFs(client);
    const fh = await fs.create('/tmpA1b2C3', 0o600);
    await fs.write(fh, pattern(3 * MiB, 8), 0);
    await fs.rename('/tmpA1b2C3', '/.fuse_hidden0000000300000002');
    await fs.write(fh, pattern(3 * MiB, 9), 3 * MiB);
    await fs.flush(fh);
    const uploaded = [...client.objects.keys()];
    await fs.release(fh);
    await fs.unlink('/.fuse_hidden0000000300000002');
    expect(uploaded).toEqual([]);
    expect(client.calls.get('put') ?? 0).toBe(0);
    await fs.stop();
  });
});

describe('another client between the flush and the append', () => {
  it.each([
    ['large (leading copies)', 20 * MiB],
    ['small (read back)', 2 * MiB],
  ])('%s: the append fails by close and the other client\'s object stands', async (_name, size) => {
    // SEMANTICS ("UploadPartCopy"): if another client replaced the object meanwhile, the append
    // fails (at the latest at the next close() or fsync()) and the other client's object stands.
    const client = new MemoryObjectClient();
    const fs = await makeFs(client, { stagingLimit: MiB });
    const fh = await fs.create('/o', 0o644);
    const first = pattern(size, 12);
    for (let at = 0; at < first.length; at += MiB) await fs.write(fh, first.subarray(at, at + MiB), at);
    await fs.flush(fh);
    const theirs = pattern(size, 13);
    await client.put('o', theirs);
    let failed = false;
    try {
      await fs.write(fh, Buffer.from('mine'), size);
      for (let i = 0; i < 6; i++) await fs.write(fh, pattern(MiB, i), size + 4 + i * MiB);
      await fs.flush(fh);
    } catch {
      failed = true;
    }
    await fs.release(fh).catch(() => undefined);
    expect(failed).toBe(true);
    expect(client.objects.get('o')?.body.equals(theirs)).toBe(true);
    await fs.stop();
  });
});
