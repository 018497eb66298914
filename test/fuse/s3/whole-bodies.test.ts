// A server that ignores Range (fuse/s3/whole-bodies.ts): GETs of one object that follow each other
// read on in one whole body instead of each moving the object from its first byte again, and get
// exact bytes whatever order, overlap or breakage.

import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { ReadVersion } from '../../../fuse/s3/read-version.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { dataPathOn, type RawRequest, startRawStore } from '../attacks/raw-store.ts';

afterAll(runTeardowns);

const MiB = 2 ** 20;
const OBJECT = randomBytes(6 * MiB);

/** Answers every GET with all of OBJECT (a 200), in 64 KiB writes; `cutAt` resets the connection there. */
function whole(sent: { bytes: number }, cutAt?: () => number | undefined) {
  return (req: RawRequest) => {
    req.socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${OBJECT.length}\r\nETag: "v1"\r\n\r\n`);
    const cut = cutAt?.();
    let at = 0;
    const pump = () => {
      while (at < OBJECT.length && !req.socket.destroyed) {
        if (cut !== undefined && at >= cut) return void req.socket.resetAndDestroy();
        const piece = OBJECT.subarray(at, at + 64 * 1024);
        at += piece.length;
        sent.bytes += piece.length;
        if (!req.socket.write(piece)) return void req.socket.once('drain', pump);
      }
    };
    pump();
  };
}

describe('a server that ignores Range', () => {
  it('consecutive GETs read on in one body: the object moves once', async () => {
    const sent = { bytes: 0 };
    const store = await startRawStore(whole(sent));
    const dp = dataPathOn(store);
    const version = new ReadVersion({ etag: 'v1', size: OBJECT.length });
    for (let at = 0; at < OBJECT.length; at += MiB) {
      const got = await dp.getBuffer('obj', { start: at, end: at + MiB, version });
      expect(got.body.equals(OBJECT.subarray(at, at + MiB))).toBe(true);
    }
    expect(store.requests.length).toBe(1);
    expect(sent.bytes).toBe(OBJECT.length);
  });

  it('parallel, overlapping and backward GETs all get exact bytes', async () => {
    const store = await startRawStore(whole({ bytes: 0 }));
    const dp = dataPathOn(store);
    const ranges = Array.from({ length: 40 }, (_, i) => {
      const start = (i * 977_531) % (OBJECT.length - 1);
      return { start, end: Math.min(OBJECT.length, start + 1 + ((i * 131_071) % (3 * MiB))) };
    });
    const got = await Promise.all(ranges.map((r) => dp.getBuffer('obj', { ...r, version: new ReadVersion({ etag: 'v1', size: OBJECT.length }) })));
    got.forEach((g, i) => expect(g.body.equals(OBJECT.subarray(ranges[i]!.start, ranges[i]!.end)), `range ${i}`).toBe(true));
  });

  it('a body reset while shared: the GETs waiting on it ask for their own and get exact bytes', async () => {
    let first = true;
    const store = await startRawStore(
      whole({ bytes: 0 }, () => {
        const cut = first ? 2.5 * MiB : undefined;
        first = false;
        return cut;
      }),
    );
    const dp = dataPathOn(store);
    const version = new ReadVersion({ etag: 'v1', size: OBJECT.length });
    const got = await Promise.all([0, 1, 2, 3, 4].map((i) => dp.getBuffer('obj', { start: i * MiB, end: (i + 1) * MiB, version })));
    got.forEach((g, i) => expect(g.body.equals(OBJECT.subarray(i * MiB, (i + 1) * MiB))).toBe(true));
  });

  it('a body of another version is not read on by a reader of this one', async () => {
    let etag = '"v1"';
    const store = await startRawStore((req) => {
      req.socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${OBJECT.length}\r\nETag: ${etag}\r\n\r\n`);
      req.socket.write(OBJECT);
    });
    const dp = dataPathOn(store);
    await dp.getBuffer('obj', { start: 0, end: MiB, version: new ReadVersion({ etag: 'v1', size: OBJECT.length }) });
    etag = '"v2"';
    const got = await dp.getBuffer('obj', { start: MiB, end: 2 * MiB, version: new ReadVersion({ etag: 'v2', size: OBJECT.length }) });
    expect(got.body.equals(OBJECT.subarray(MiB, 2 * MiB))).toBe(true);
    expect(store.requests.length).toBe(2);
  });
});
