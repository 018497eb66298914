// Attacks on the mount's own HTTP/1.1 client and data path at the byte level: a store (or a proxy
// in front of it) that sends interim answers, splits its answer at every byte, lies in its
// Content-Range or status, closes kept-alive connections while they idle, or frames headers
// oddly. The promise (docs/SEMANTICS.md, "read"): a read returns exactly the object's bytes or
// fails with an errno, never wrong bytes.

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { dataPathOn, partial, type RawRequest, startRawStore } from './raw-store.ts';

const OBJECT = randomBytes(4 * 2 ** 20);

const ok = (req: RawRequest) => req.socket.write(partial(OBJECT, req.range!));

describe('interim (1xx) answers before the real one', () => {
  // RFC 9110 §15.2: "A client MUST be able to parse one or more 1xx responses received prior to
  // a final response, even if the client does not expect one." A CDN or proxy in front of the
  // store may send 103 Early Hints; a server may send 102 Processing on a slow answer. The read
  // should get the object's bytes, as curl, undici and the AWS SDK's node:http client do.
  for (const interim of [
    'HTTP/1.1 100 Continue\r\n\r\n',
    'HTTP/1.1 102 Processing\r\n\r\n',
    'HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload; as=style\r\nLink: </a.js>; rel=preload\r\n\r\n',
  ]) {
    it(`ignores ${interim.split('\r\n')[0]} and reads the 206 after it`, async () => {
      const store = await startRawStore((req) => {
        req.socket.write(interim);
        ok(req);
      });
      const dp = dataPathOn(store);
      const got = await dp.getBuffer('obj', { start: 1000, end: 5000 });
      expect(got.body.equals(OBJECT.subarray(1000, 5000))).toBe(true);
    });
  }

  it('ignores two interim answers in a row, each split across writes', async () => {
    const store = await startRawStore((req) => {
      req.socket.write('HTTP/1.1 100 Cont');
      setTimeout(() => req.socket.write('inue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n'), 5);
      setTimeout(() => ok(req), 10);
    });
    const dp = dataPathOn(store);
    const got = await dp.getBuffer('obj', { start: 0, end: 3000 });
    expect(got.body.equals(OBJECT.subarray(0, 3000))).toBe(true);
  });
});

describe('an answer split at every byte', () => {
  it('reads the exact bytes when each byte of head and body arrives alone', async () => {
    const store = await startRawStore((req) => {
      req.socket.setNoDelay(true);
      const bytes = partial(OBJECT, req.range!);
      let i = 0;
      const next = () => {
        if (i >= bytes.length || req.socket.destroyed) return;
        req.socket.write(bytes.subarray(i, i + 1));
        i++;
        setImmediate(next);
      };
      next();
    });
    const dp = dataPathOn(store);
    const got = await dp.getBuffer('obj', { start: 777, end: 777 + 600 });
    expect(got.body.equals(OBJECT.subarray(777, 1377))).toBe(true);
  });

  it('reads a chunked answer split at every byte', async () => {
    const store = await startRawStore((req) => {
      const { start, end } = req.range!;
      const body = OBJECT.subarray(start, end);
      const text = Buffer.concat([
        Buffer.from(
          `HTTP/1.1 206 Partial Content\r\nTransfer-Encoding: chunked\r\nContent-Range: bytes ${start}-${end - 1}/${OBJECT.length}\r\nETag: "v1"\r\n\r\n`,
        ),
        Buffer.from(`${(100).toString(16)};ext=1\r\n`),
        body.subarray(0, 100),
        Buffer.from(`\r\n${(body.length - 100).toString(16)}\r\n`),
        body.subarray(100),
        Buffer.from('\r\n0\r\nx-trailer: 1\r\n\r\n'),
      ]);
      let i = 0;
      const next = () => {
        if (i >= text.length || req.socket.destroyed) return;
        req.socket.write(text.subarray(i, i + 1));
        i++;
        setImmediate(next);
      };
      next();
    });
    const dp = dataPathOn(store);
    const got = await dp.getBuffer('obj', { start: 4096, end: 4096 + 500 });
    expect(got.body.equals(OBJECT.subarray(4096, 4596))).toBe(true);
  });
});

describe('lying headers are refused, never read as data', () => {
  const refused = async (answer: (req: RawRequest) => string | Buffer) => {
    const store = await startRawStore((req) => req.socket.write(answer(req)));
    const dp = dataPathOn(store, { maxAttempts: 1 });
    const err = await dp.getBuffer('obj', { start: 1000, end: 2000 }).then(
      (got) => ({ got: got.body }),
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
  };

  it('a Content-Range shifted from the byte asked for', () =>
    refused((req) => {
      const b = partial(OBJECT, { start: req.range!.start + 1, end: req.range!.end + 1 });
      return b;
    }));

  it('a 206 with Content-Range "bytes */size"', () =>
    refused(() => `HTTP/1.1 206 Partial Content\r\nContent-Length: 1000\r\nContent-Range: bytes */${OBJECT.length}\r\n\r\n${'x'.repeat(1000)}`));

  it('a 206 whose Content-Length disagrees with its Content-Range', () =>
    refused(
      (req) =>
        `HTTP/1.1 206 Partial Content\r\nContent-Length: 999\r\nContent-Range: bytes ${req.range!.start}-${req.range!.end - 1}/${OBJECT.length}\r\n\r\n${'x'.repeat(999)}`,
    ));

  it('two Content-Lengths that disagree', () =>
    refused(
      (req) =>
        `HTTP/1.1 206 Partial Content\r\nContent-Length: 1000\r\nContent-Length: 900\r\nContent-Range: bytes ${req.range!.start}-${req.range!.end - 1}/${OBJECT.length}\r\n\r\n${'x'.repeat(1000)}`,
    ));

  it('an obs-folded header', () =>
    refused(
      (req) =>
        `HTTP/1.1 206 Partial Content\r\nContent-Length: 1000\r\nX-A: b\r\n c\r\nContent-Range: bytes ${req.range!.start}-${req.range!.end - 1}/${OBJECT.length}\r\n\r\n${'x'.repeat(1000)}`,
    ));

  it('headers beyond 64 KiB', () =>
    refused(() => `HTTP/1.1 206 Partial Content\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`));
});

describe('a kept-alive connection the server closed while it idled in the pool', () => {
  // docs/SEMANTICS.md: a request that fails on a kept-alive connection before any byte of answer
  // came back is sent once more on a new connection. The read must get its bytes.
  for (const how of ['FIN', 'RST'] as const) {
    it(`the second request on a connection meets a ${how}, and is sent again`, async () => {
      const store = await startRawStore((req) => {
        if (req.onConnection === 0) return ok(req);
        if (how === 'FIN') req.socket.end();
        else req.socket.resetAndDestroy();
      });
      const dp = dataPathOn(store, { maxAttempts: 1 });
      const a = await dp.getBuffer('obj', { start: 0, end: 1000 });
      expect(a.body.equals(OBJECT.subarray(0, 1000))).toBe(true);
      const b = await dp.getBuffer('obj', { start: 1000, end: 2000 });
      expect(b.body.equals(OBJECT.subarray(1000, 2000))).toBe(true);
    });
  }
});

describe('every kept-alive connection gone at once (a load balancer failed over)', () => {
  // The store answers on new connections, but each connection kept alive in the pool is reset
  // when used again, as after a failover of the address to another machine. The pool's comment
  // promises a request that fails that way "is sent once more on a new connection"; it takes the
  // next idle (equally dead) one instead, so after a burst of parallel reads a single read
  // burns through --retries attempts on dead connections and fails with EIO while the store is
  // up. Expected: the read gets its bytes.
  for (const [idle, attempts] of [
    [2, 1],
    [16, 6],
  ] as const) {
    it(`${idle} idle connections, --retries ${attempts}: the next read still gets its bytes`, async () => {
      let failedOver = false;
      const store = await startRawStore((req) => {
        if (failedOver && req.onConnection > 0) return req.socket.resetAndDestroy();
        // Held a moment, so that the burst opens one connection per read.
        setTimeout(() => ok(req), 30);
      });
      const dp = dataPathOn(store, { maxAttempts: attempts });
      await Promise.all(
        Array.from({ length: idle }, (_, i) => dp.getBuffer('obj', { start: i * 1000, end: i * 1000 + 1000 })),
      );
      failedOver = true;
      const got = await dp.getBuffer('obj', { start: 0, end: 5000 });
      expect(got.body.equals(OBJECT.subarray(0, 5000))).toBe(true);
    });
  }
});

describe('an endpoint on the IPv6 loopback', () => {
  it('reads the exact bytes from http://[::1]:port, Host header and all', async () => {
    let host = '';
    const store = await startRawStore((req) => {
      host = req.headers.host ?? '';
      ok(req);
    }, '::1');
    const dp = dataPathOn(store);
    const got = await dp.getBuffer('obj', { start: 5, end: 70_000 });
    expect(got.body.equals(OBJECT.subarray(5, 70_000))).toBe(true);
    expect(host).toMatch(/^\[::1\]:\d+$/);
  });
});
