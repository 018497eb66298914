// Attacks on the append that goes on after a flush published a file without a local copy
// (docs/SEMANTICS.md, "ESTUARY_FS_COPY_DROPPED" and "UploadPartCopy"), on the filesystem layer
// over the in-memory client, with the cache directory on a 256 KiB tmpfs so no local copy fits.

import { constants } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryObjectClient } from '../../../fuse/s3/memory-client.ts';
import { ObjectError } from '../../../fuse/s3/object-client.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { bytesAt, fsOnFullDisk, MiB, turnReadOnly, writeRange } from './append-after-flush-fs.ts';

afterAll(runTeardowns);

const O_WRONLY = constants.O_WRONLY;

/** The bytes the object should hold after writing [0, size) with writeRange. */
const expected = (size: number) => bytesAt(0, size);

async function published(client: MemoryObjectClient, key: string): Promise<Buffer | undefined> {
  return client.objects.get(key)?.body;
}

describe('append after a flush without a local copy (memory client, full cache disk)', () => {
  it('exact bytes after flush then append at part boundaries and around 5 MiB', async () => {
    const client = new MemoryObjectClient();
    const { fs, warned } = await fsOnFullDisk(client, { firstPartSize: 5 * MiB });
    // Published sizes: just under / at / over 5 MiB, at the first and later part boundaries.
    const sizes = [16 * MiB + 1, 21 * MiB - 1, 21 * MiB, 21 * MiB + 1, 26 * MiB, 26 * MiB + 5 * MiB - 1];
    for (const first of sizes) {
      const path = `/b-${first}`;
      const fh = await fs.create(path, 0o644);
      await writeRange(fs, fh, 0, first);
      await fs.flush(fh);
      // The append: 1 byte, then a part and a bit.
      await writeRange(fs, fh, first, first + 1);
      await writeRange(fs, fh, first + 1, first + 1 + 6 * MiB + 7);
      await fs.flush(fh);
      await fs.release(fh);
      const got = await published(client, path.slice(1));
      expect(got?.length, `size after publishing ${first}`).toBe(first + 1 + 6 * MiB + 7);
      expect(got!.equals(expected(first + 1 + 6 * MiB + 7)), `bytes after publishing ${first}`).toBe(true);
    }
    expect(warned.some((w) => w.obj.code === 'ESTUARY_FS_COPY_DROPPED')).toBe(true);
    expect(client.uploads.size).toBe(0);
  });

  it('many flushes in a row (a child closing after every MiB) keep every byte', async () => {
    const client = new MemoryObjectClient();
    const { fs } = await fsOnFullDisk(client, { firstPartSize: 5 * MiB });
    const fh = await fs.create('/many', 0o644);
    await writeRange(fs, fh, 0, 17 * MiB);
    await fs.flush(fh);
    for (let at = 17 * MiB; at < 30 * MiB; at += MiB) {
      await writeRange(fs, fh, at, at + MiB);
      await fs.flush(fh);
    }
    await fs.release(fh);
    const got = await published(client, 'many');
    expect(got?.length).toBe(30 * MiB);
    expect(got!.equals(expected(30 * MiB))).toBe(true);
  });

  // --upload-concurrency: "parts of one file uploaded at once" (docs/CONFIGURATION.md). The
  // leading parts copied in the bucket are parts of that file's upload too: a published object
  // of hundreds of parts must not become hundreds of requests at once against the server (a
  // 100 GiB object is 6,400 UploadPartCopy requests in parallel), nor, where the copy goes
  // through this host, hundreds of ranged GETs waiting on the memory budget at once.
  it('copies of the leading parts stay within --upload-concurrency', async () => {
    const client = new MemoryObjectClient();
    let now = 0;
    let peak = 0;
    const copy = client.uploadPartCopy.bind(client);
    client.uploadPartCopy = async (...args) => {
      now++;
      peak = Math.max(peak, now);
      try {
        await new Promise((r) => setTimeout(r, 20));
        return await copy(...args);
      } finally {
        now--;
      }
    };
    const { fs } = await fsOnFullDisk(client, { firstPartSize: 5 * MiB, maxInFlight: 2 });
    const fh = await fs.create('/wide', 0o644);
    await writeRange(fs, fh, 0, 60 * MiB);
    await fs.flush(fh);
    await writeRange(fs, fh, 60 * MiB, 60 * MiB + 1);
    await fs.flush(fh);
    await fs.release(fh);
    const got = await published(client, 'wide');
    expect(got!.equals(expected(60 * MiB + 1))).toBe(true);
    expect(client.calls.get('uploadPartCopy')).toBe(12);
    expect(peak, 'UploadPartCopy requests at once with --upload-concurrency 2').toBeLessThanOrEqual(2);
  });

  // Where the server has no UploadPartCopy (s3rver), the leading parts come through this host:
  // "--memory-limit: hard budget for readahead, reads and write buffers" (docs/CONFIGURATION.md).
  // The ranged GETs held at once, with the writer's part buffers, stay within it.
  it('through this host (no UploadPartCopy), the leading parts stay within --memory-limit', async () => {
    const client = new MemoryObjectClient();
    client.uploadPartCopy = async () => {
      throw new ObjectError('other', 'NotImplemented (HTTP 501)');
    };
    let held = 0;
    let peak = 0;
    const bodies = new WeakSet<Buffer>();
    const get = client.get.bind(client);
    client.get = async (key, range) => {
      const n = range ? range.end - range.start : 0;
      held += n;
      peak = Math.max(peak, held);
      await new Promise((r) => setTimeout(r, 10));
      const body = await get(key, range);
      bodies.add(body);
      return body;
    };
    const uploadPart = client.uploadPart.bind(client);
    client.uploadPart = async (key, id, n, body) => {
      try {
        return await uploadPart(key, id, n, body);
      } finally {
        if (bodies.has(body)) held -= body.length; // the GET's body is let go once its part is up
      }
    };
    const limit = 48 * MiB;
    const { fs } = await fsOnFullDisk(client, { memoryLimit: limit });
    const fh = await fs.create('/big', 0o644);
    await writeRange(fs, fh, 0, 160 * MiB);
    await fs.flush(fh);
    await writeRange(fs, fh, 160 * MiB, 161 * MiB);
    await fs.flush(fh);
    await fs.release(fh);
    expect((await published(client, 'big'))!.equals(expected(161 * MiB))).toBe(true);
    expect(peak, 'bytes of ranged GETs held at once').toBeLessThanOrEqual(limit);
  });

  // A flushed file renamed while still open (nothing unsaved: a server-side copy), then appended
  // to: the append belongs to the new name and must carry every byte there. The copy made by the
  // rename is the same bytes, so "another client replaced it" is not a reason to fail the close.
  it('flush, rename, append: the new name holds every byte and close succeeds', async () => {
    const client = new MemoryObjectClient();
    const { fs } = await fsOnFullDisk(client, { firstPartSize: 5 * MiB });
    const fh = await fs.create('/old', 0o644);
    await writeRange(fs, fh, 0, 20 * MiB);
    await fs.flush(fh);
    await fs.rename('/old', '/new');
    await writeRange(fs, fh, 20 * MiB, 21 * MiB);
    await fs.flush(fh);
    await fs.release(fh);
    expect(client.objects.has('old')).toBe(false);
    const got = await published(client, 'new');
    expect(got?.length).toBe(21 * MiB);
    expect(got!.equals(expected(21 * MiB))).toBe(true);
  });

  // chmod of the flushed file while still open copies the object onto itself to change its
  // metadata, which gives it a new ETag; our own chmod is not "another client replaced it".
  it('flush, chmod, append: every byte and close succeeds', async () => {
    const client = new MemoryObjectClient();
    const { fs } = await fsOnFullDisk(client, { firstPartSize: 5 * MiB });
    const fh = await fs.create('/moded', 0o644);
    await writeRange(fs, fh, 0, 20 * MiB);
    await fs.flush(fh);
    await fs.chmod('/moded', 0o600);
    await writeRange(fs, fh, 20 * MiB, 21 * MiB);
    await fs.flush(fh);
    await fs.release(fh);
    expect((await published(client, 'moded'))!.equals(expected(21 * MiB))).toBe(true);
  });

  it('a cache disk turned read-only under the stream: the append after a flush goes on', async () => {
    const client = new MemoryObjectClient();
    const { fs, disk, warned } = await fsOnFullDisk(client, { firstPartSize: 5 * MiB, diskBytes: 256 * MiB });
    turnReadOnly(disk);
    const fh = await fs.create('/ro', 0o644);
    await writeRange(fs, fh, 0, 20 * MiB);
    await fs.flush(fh);
    await writeRange(fs, fh, 20 * MiB, 26 * MiB + 1);
    await fs.flush(fh);
    await fs.release(fh);
    expect((await published(client, 'ro'))!.equals(expected(26 * MiB + 1))).toBe(true);
    expect(warned.some((w) => w.obj.code === 'ESTUARY_FS_COPY_DROPPED' && String(w.obj.err).includes('EROFS'))).toBe(true);
  });

  it('past --staging-limit on a healthy disk: the append after a flush goes on', async () => {
    const client = new MemoryObjectClient();
    const { fs } = await fsOnFullDisk(client, { firstPartSize: 5 * MiB, diskBytes: 256 * MiB, stagingLimit: 8 * MiB });
    const fh = await fs.create('/limited', 0o644);
    await writeRange(fs, fh, 0, 20 * MiB);
    await fs.flush(fh);
    await writeRange(fs, fh, 20 * MiB, 21 * MiB);
    await fs.flush(fh);
    await fs.release(fh);
    expect((await published(client, 'limited'))!.equals(expected(21 * MiB))).toBe(true);
  });

  // POSIX: an unlinked file stays writable through descriptors still open; its bytes are simply
  // dropped at close. Writing a few parts past the end after the unlink must not fail because
  // the published bytes the stream meant to go on from are gone.
  it('flush, unlink, append: writes and close succeed, nothing is left in the bucket', async () => {
    const client = new MemoryObjectClient();
    const { fs } = await fsOnFullDisk(client, { firstPartSize: 5 * MiB });
    const fh = await fs.create('/gone', 0o644);
    await writeRange(fs, fh, 0, 20 * MiB);
    await fs.flush(fh);
    await fs.unlink('/gone');
    await writeRange(fs, fh, 20 * MiB, 40 * MiB);
    await fs.flush(fh);
    await fs.release(fh);
    expect(client.objects.has('gone')).toBe(false);
    expect(client.uploads.size).toBe(0);
  });

  it('another client replacing the object between flush and append: close fails, theirs stays whole', async () => {
    const client = new MemoryObjectClient();
    const { fs } = await fsOnFullDisk(client, { firstPartSize: 5 * MiB });
    const fh = await fs.create('/raced', 0o644);
    await writeRange(fs, fh, 0, 20 * MiB);
    await fs.flush(fh);
    const theirs = bytesAt(0, 20 * MiB, 99);
    await client.put('raced', theirs);
    await writeRange(fs, fh, 20 * MiB, 21 * MiB);
    await expect(fs.flush(fh)).rejects.toThrow();
    await fs.release(fh).catch(() => undefined);
    expect((await published(client, 'raced'))!.equals(theirs)).toBe(true);
    expect(client.uploads.size).toBe(0);
  });

  it('another client deleting the object between flush and append: the writer gets an errno', async () => {
    const client = new MemoryObjectClient();
    const { fs } = await fsOnFullDisk(client, { firstPartSize: 5 * MiB });
    const fh = await fs.create('/deleted', 0o644);
    await writeRange(fs, fh, 0, 20 * MiB);
    await fs.flush(fh);
    await client.delete('deleted');
    await writeRange(fs, fh, 20 * MiB, 21 * MiB);
    await expect(fs.flush(fh)).rejects.toThrow();
    await fs.release(fh).catch(() => undefined);
    expect(client.objects.has('deleted')).toBe(false);
  });

  // An existing object opened for writing (not truncated), appended to with the cache disk too
  // small to take a copy: the append goes on from the object as opened. If another client
  // replaced it after our open, nothing of theirs may be mixed with our append.
  it('append to an existing object replaced after open: close fails, theirs stays whole', async () => {
    const client = new MemoryObjectClient();
    await client.put('existing', bytesAt(0, 12 * MiB));
    const { fs } = await fsOnFullDisk(client, { firstPartSize: 5 * MiB });
    await fs.getattr('/existing');
    const fh = await fs.open('/existing', O_WRONLY);
    const theirs = bytesAt(0, 12 * MiB, 42);
    await client.put('existing', theirs);
    await writeRange(fs, fh, 12 * MiB, 13 * MiB).catch(() => undefined);
    await expect(fs.flush(fh)).rejects.toThrow();
    await fs.release(fh).catch(() => undefined);
    expect((await published(client, 'existing'))!.equals(theirs)).toBe(true);
  });

  // "a writer whose child process exits mid-write is not stopped" (docs/SEMANTICS.md): a child
  // that wrote 1 MiB and exited published the file in one PUT; the parent's next write at the end
  // must go on although the cache disk cannot take a copy. Under 5 MiB no part can be copied in
  // the bucket, but those bytes fit in one part buffer: the append must not fail with ENOSPC.
  it('a small published file (under 5 MiB) can still be appended to on a full cache disk', async () => {
    const client = new MemoryObjectClient();
    const { fs } = await fsOnFullDisk(client);
    const fh = await fs.create('/small.log', 0o644);
    await writeRange(fs, fh, 0, MiB);
    await fs.flush(fh);
    await writeRange(fs, fh, MiB, 2 * MiB);
    await fs.flush(fh);
    await fs.release(fh);
    expect((await published(client, 'small.log'))!.equals(expected(2 * MiB))).toBe(true);
  });

  // Not only on a failed disk: a file published by a one-PUT flush, then unlinked, then
  // written at its end through the still-open descriptor. POSIX keeps the file writable.
  it('flush of a small file, unlink, append (healthy disk): the write succeeds', async () => {
    const client = new MemoryObjectClient();
    const { fs } = await fsOnFullDisk(client, { diskBytes: 256 * MiB });
    const fh = await fs.create('/small-gone', 0o644);
    await writeRange(fs, fh, 0, 64 * 1024);
    await fs.flush(fh);
    await fs.unlink('/small-gone');
    await fs.write(fh, Buffer.from('more\n'), 64 * 1024);
    await fs.flush(fh);
    await fs.release(fh);
    expect(client.objects.has('small-gone')).toBe(false);
  });
});
