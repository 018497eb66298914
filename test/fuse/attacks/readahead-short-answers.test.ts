// Attacks on readahead (fuse/fs/prefetcher.ts, chunk.ts) through the real data path: answers
// that carry fewer bytes of the range than the file has, because the store says the object is
// shorter (a 206 whose Content-Range total is below the size open() saw: the object was replaced
// by a shorter one on a store that sends no ETag) or because a proxy answered a ranged GET with a
// 200 whose body is only the range. The promise (docs/SEMANTICS.md, "read"): a read returns
// exactly the object's bytes as open() saw it, or fails with an errno; "a file replaced in the
// bucket by another client while open here is never read as a mix of its old and new bytes".

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryBudget } from '../../../fuse/fs/memory-budget.ts';
import { Prefetcher } from '../../../fuse/fs/prefetcher.ts';
import { dataPathOn, readClient, type RawRequest, startRawStore } from './raw-store.ts';

const MiB = 2 ** 20;
const OBJECT = randomBytes(4 * MiB);

/** A 206 of `range` of `body` with no ETag (some S3-compatible gateways send none). */
function noEtag206(body: Buffer, range: { start: number; end: number }): Buffer {
  if (range.start >= body.length)
    return Buffer.from(`HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */${body.length}\r\nContent-Length: 0\r\n\r\n`);
  const end = Math.min(range.end, body.length);
  const head = `HTTP/1.1 206 Partial Content\r\nContent-Length: ${end - range.start}\r\nContent-Range: bytes ${range.start}-${end - 1}/${body.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head), body.subarray(range.start, end)]);
}

async function opened(answer: (req: RawRequest) => void) {
  const store = await startRawStore(answer);
  const client = readClient(dataPathOn(store, { maxAttempts: 2 }));
  // Opened as a 4 MiB object (the size open() saw), no ETag known.
  return new Prefetcher(client, 'obj', OBJECT.length, new MemoryBudget(256 * MiB), 16 * MiB, undefined, [], '');
}

/** What a read gave: its bytes, or the error it failed with. */
const outcome = (p: Promise<Buffer>) => p.then((b) => ({ bytes: Buffer.from(b) }), (err: unknown) => ({ err }));

describe('the object turned shorter than open() saw (206 with a smaller total)', () => {
  // After open, another client replaced the object with its first 1.5 MB. The store sends no
  // ETag, so the only sign is the Content-Range total: 1.5 MB, not the 4 MiB the file was opened
  // with. Expected: the read fails (ESTALE, as for a replaced file, or EIO), never a short read
  // that the kernel takes for the end of the file.
  const SHORT = 1_500_000;
  const shrunk = OBJECT.subarray(0, SHORT);

  it('a read inside the missing part fails rather than ending the file early', async () => {
    const p = await opened((req) => req.socket.write(noEtag206(shrunk, req.range!)));
    const got = await outcome(p.read(1_600_000, 128 * 1024));
    expect(got).toHaveProperty('err');
  });

  it('a read that ends past the new end fails rather than answering short', async () => {
    const p = await opened((req) => req.socket.write(noEtag206(shrunk, req.range!)));
    const got = await outcome(p.read(SHORT - 4096, 128 * 1024));
    expect(got, `answered ${'bytes' in got ? got.bytes.length : 0} bytes of a read inside the 4 MiB file`).toHaveProperty('err');
  });

  it('a read across two GETs never hands back bytes that are not the object\'s', async () => {
    // The first GET (after a seek) is answered by the shrunk object, later ones by the original:
    // a read that spans both must not return what the reply buffer held before.
    let first = true;
    const p = await opened((req) => {
      const body = first ? shrunk : OBJECT;
      first = false;
      req.socket.write(noEtag206(body, req.range!));
    });
    const at = SHORT - 300_000;
    // The seek: one 1 MiB GET from `at`, answered by the shrunk object. Its Content-Range total
    // shows another version: ESTALE is the documented answer, as is the object's bytes.
    const seek = await outcome(p.read(at, 4096));
    if ('bytes' in seek) expect(seek.bytes.equals(OBJECT.subarray(at, at + 4096))).toBe(true);
    const into = Buffer.alloc(128 * 1024, 0xee); // the FUSE reply buffer, holding an earlier read's bytes
    const from = at + MiB - 64 * 1024; // across the end of that GET
    const got = await outcome(p.read(from, 128 * 1024, into));
    if ('bytes' in got) {
      const stale = got.bytes.indexOf(Buffer.alloc(4096, 0xee));
      expect(stale, `the reply holds the buffer's old bytes from offset ${stale}`).toBe(-1);
      expect(got.bytes.length).toBe(128 * 1024);
      expect(got.bytes.equals(OBJECT.subarray(from, from + 128 * 1024))).toBe(true);
    }
  });
});

describe('a 200 to a ranged GET whose body is only the range', () => {
  // A proxy that answers a ranged GET with 200 but sends only the range's bytes (its Content-Length
  // is the range's length, not the object's 4 MiB). Taking it for the whole object, as the data
  // path does, skips `start` bytes of a body that began at `start`. Expected: the read fails, or
  // it returns the object's own bytes; never bytes from elsewhere in the object.
  const rangeOnly200 = (req: RawRequest) => {
    const { start, end } = req.range!;
    const body = OBJECT.subarray(start, Math.min(end, OBJECT.length));
    req.socket.write(Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`), body]));
  };

  it('a read at 512 KiB gets the bytes at 512 KiB or an error', async () => {
    const p = await opened(rangeOnly200);
    const got = await outcome(p.read(512 * 1024, 128 * 1024));
    if ('bytes' in got) {
      const from = OBJECT.indexOf(got.bytes.subarray(0, 64));
      expect(from, `the bytes returned for 512 KiB are the object's bytes at ${from}`).toBe(512 * 1024);
    }
  });

  it('a read at 2 MiB of a 4 MiB file is not answered as the end of the file', async () => {
    const p = await opened(rangeOnly200);
    const got = await outcome(p.read(2 * MiB, 128 * 1024));
    if ('bytes' in got) {
      expect(got.bytes.length, 'a short read is the end of the file to the kernel').toBe(128 * 1024);
      expect(got.bytes.equals(OBJECT.subarray(2 * MiB, 2 * MiB + 128 * 1024))).toBe(true);
    }
  });
});

describe('a server that ignores Range (RFC 9110 lets it) and sends the whole object each time', () => {
  // Every ranged GET is answered 200 with all 16 MiB. The data path skips to the range and keeps
  // what it asked for, but then reads the rest of the object to its end before the GET is over,
  // holding a connection for it: reading the file once through readahead moves the object many
  // times over. Expected: once the range has arrived the rest is not read (the connection is
  // closed instead), so a sequential read moves about the object's size, not a multiple of it.
  it('a sequential read of the file moves at most twice its size', async () => {
    const big = randomBytes(16 * MiB);
    let sent = 0;
    const store = await startRawStore((req) => {
      req.socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${big.length}\r\nETag: "v1"\r\n\r\n`);
      // Written in 1 MiB pieces as the socket drains, counting what actually left.
      let at = 0;
      const pump = () => {
        while (at < big.length && !req.socket.destroyed) {
          const piece = big.subarray(at, at + MiB);
          at += piece.length;
          sent += piece.length;
          if (!req.socket.write(piece)) return void req.socket.once('drain', pump);
        }
      };
      pump();
    });
    const client = readClient(dataPathOn(store, { maxAttempts: 2 }));
    const p = new Prefetcher(client, 'obj', big.length, new MemoryBudget(256 * MiB), 16 * MiB, undefined, [], 'v1');
    const out = Buffer.alloc(big.length);
    for (let at = 0; at < big.length; at += 128 * 1024) (await p.read(at, 128 * 1024)).copy(out, at);
    expect(out.equals(big)).toBe(true);
    await new Promise((r) => setTimeout(r, 200));
    expect(sent / big.length, 'times the object was sent for one read of it').toBeLessThanOrEqual(2);
  });
});

describe('a store that sends no ETag, and the object replaced by one of the same size', () => {
  // Without an ETag there is no If-Match and nothing to compare, but Last-Modified still tells the
  // versions apart. docs/SEMANTICS.md: a file replaced while open "is never read as a mix of its
  // old and new bytes". Expected: reads after the replacement fail (ESTALE) or return old bytes.
  it('a read after the replacement never returns the new version\'s bytes', async () => {
    const newer = randomBytes(OBJECT.length);
    let body = OBJECT;
    let modified = 'Tue, 24 Nov 2026 12:00:00 GMT';
    const p = await opened((req) => {
      const { start } = req.range!;
      const end = Math.min(req.range!.end, body.length);
      const head = `HTTP/1.1 206 Partial Content\r\nContent-Length: ${end - start}\r\nContent-Range: bytes ${start}-${end - 1}/${body.length}\r\nLast-Modified: ${modified}\r\n\r\n`;
      req.socket.write(Buffer.concat([Buffer.from(head), body.subarray(start, end)]));
    });
    const first = await p.read(0, 128 * 1024);
    expect(first.equals(OBJECT.subarray(0, 128 * 1024))).toBe(true);
    body = newer;
    modified = 'Tue, 24 Nov 2026 12:05:00 GMT';
    const got = await outcome(p.read(3 * MiB, 128 * 1024));
    if ('bytes' in got) expect(got.bytes.equals(newer.subarray(3 * MiB, 3 * MiB + 128 * 1024)), 'bytes of the newer version').toBe(false);
  });
});
