// Attack: answers shaped to hold or mislead the mount's control client — an error whose body
// never ends, a storm of 503s, a DeleteObjects nobody answers, a listing entry without a size, a
// CompleteMultipartUpload whose answer is lost after the store completed it.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { listPage } from '../../../fuse/s3/s3-replies.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { clientFor, startLyingServer, within, xml } from './lying-s3.ts';

afterAll(runTeardowns);

/** A server whose every answer is a 500 with a body that trickles on forever. */
async function endlessErrorServer(): Promise<{ endpoint: string; requests: () => number }> {
  let requests = 0;
  const timers = new Set<NodeJS.Timeout>();
  const srv = http.createServer((req, res) => {
    requests++;
    req.resume();
    res.writeHead(500, { 'content-type': 'application/xml' });
    res.write('<?xml version="1.0"?><Error><Code>InternalError</Code><Message>');
    const t = setInterval(() => res.write('x'.repeat(1024)), 20);
    timers.add(t);
    res.on('close', () => clearInterval(t));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  onTeardown(async () => {
    for (const t of timers) clearInterval(t);
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  });
  return { endpoint: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, requests: () => requests };
}

describe('answers that hold the caller', () => {
  // Expected: an error answer is read only as far as its Code and Message need (the client keeps
  // 16 KiB of it); past that the connection is dropped and the attempt fails, so the call fails
  // after its retries. Today the client reads the endless body forever (bytes keep coming, so
  // --request-timeout, which counts silence, never fires) and the listing never answers.
  it('an error answer with an endless body does not hold a listing forever', async () => {
    const server = await endlessErrorServer();
    const client = clientFor(server.endpoint, { maxAttempts: 2, idleTimeoutMs: 1000 });
    const got = await within(client.list(''), 6000);
    expect(got, `after ${server.requests()} requests`).not.toBe('still pending');
    expect(got).toHaveProperty('error');
  });

  // Holds today: 503 SlowDown on every attempt is tried --retries times, then fails.
  it('a storm of 503 SlowDown is tried maxAttempts times, no more', async () => {
    const server = await startLyingServer(() => ({
      status: 503,
      body: xml('<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>'),
    }));
    const client = clientFor(server.endpoint, { maxAttempts: 3 });
    const got = await within(client.list(''), 10_000);
    expect(got).toHaveProperty('error');
    expect(server.requests.length).toBe(3);
  });

  // Holds today: a DeleteObjects the server accepts and never answers fails after
  // --request-timeout on each attempt.
  it('a DeleteObjects that is never answered fails after the attempts time out', async () => {
    const server = await startLyingServer(() => 'hang');
    const client = clientFor(server.endpoint, { maxAttempts: 2, idleTimeoutMs: 800 });
    const got = await within(client.deleteMany(['a', 'b']), 6000);
    expect(got).toHaveProperty('error');
    expect(server.requests.length).toBe(2);
  });
});

describe('an <Error> inside a 200', () => {
  // Holds today: S3 sends 200, then an <Error>, when a CopyObject or CompleteMultipartUpload
  // fails after its headers went out; the call is tried again, as the AWS SDK does.
  for (const [name, call, root] of [
    ['CopyObject', (c: ReturnType<typeof clientFor>) => c.copy('src', 'dst'), 'CopyObjectResult'],
    ['CompleteMultipartUpload', (c: ReturnType<typeof clientFor>) => c.completeMultipart('k', 'u1', [{ partNumber: 1, etag: 'abc' }]), 'CompleteMultipartUploadResult'],
  ] as const) {
    it(`${name}: a 200 with <Error> is retried, and the retry's result is used`, async () => {
      let n = 0;
      const server = await startLyingServer(() =>
        n++ === 0
          ? { body: `${' '.repeat(64)}\n${xml('<Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>')}` }
          : { body: xml(`<${root}><ETag>"good"</ETag></${root}>`) },
      );
      const got = await within(call(clientFor(server.endpoint)), 5000);
      expect(got).toEqual({ value: { etag: 'good' } });
      expect(server.requests).toHaveLength(2);
    });
  }
});

describe('huge metadata', () => {
  // Holds today: a HEAD whose x-amz-meta headers fill 30 KiB is read whole; one past the 64 KiB
  // the client takes for headers fails at once (EPROTO), and is not retried.
  it('30 KiB of metadata is read; 100 KiB fails fast', async () => {
    let size = 30 * 1024;
    const server = await startLyingServer(() => ({
      headers: { etag: '"e"', 'content-length': '1', 'x-amz-meta-big': 'x'.repeat(size), 'x-amz-meta-mode': '33188' },
    }));
    const client = clientFor(server.endpoint);
    expect((await client.head('k'))?.metadata.mode).toBe('33188');
    size = 100 * 1024;
    const got = await within(client.head('k'), 3000);
    expect(got).toHaveProperty('error');
    expect(server.requests).toHaveLength(2);
  });
});

describe('answers that mislead', () => {
  // Expected: a listing entry without <Size> is a listing that cannot be read whole, an error
  // (s3-replies.ts: "numbers that are not numbers ... is an error, never a shorter listing"), as
  // a negative or non-numeric Size already is. Today it is read as an empty object: the file
  // shows 0 bytes and reads as empty.
  it('a Contents entry without a Size is refused, not read as empty', () => {
    const body = xml(
      '<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>data.bin</Key><ETag>"e"</ETag>' +
        '<LastModified>2020-01-01T00:00:00.000Z</LastModified></Contents></ListBucketResult>',
    );
    expect(() => listPage(body)).toThrow(/Size/);
  });

  // Expected: an IsTruncated the client cannot read as exactly true or false ("True", "1", which
  // XML Schema's boolean also allows) is either read as true or refused — the AWS SDK's
  // parseBoolean throws on anything but "true"/"false". Today anything but "true" reads as false:
  // the listing ends after this page and readdir silently shows only its first 1000 names. Nor
  // does a page that carries a NextContinuationToken but no IsTruncated at all (the SDK's
  // paginator went on while there was a token).
  for (const value of ['True', '1', ' TRUE ', undefined]) {
    it(`IsTruncated ${value === undefined ? 'missing' : JSON.stringify(value)} with a token never ends a listing silently`, () => {
      const body = xml(
        `<ListBucketResult>${value === undefined ? '' : `<IsTruncated>${value}</IsTruncated>`}<NextContinuationToken>t2</NextContinuationToken>` +
          '<Contents><Key>a</Key><Size>1</Size><ETag>"e"</ETag><LastModified>2020-01-01T00:00:00.000Z</LastModified></Contents></ListBucketResult>',
      );
      let next: string | undefined;
      let refused = false;
      try {
        next = listPage(body).nextToken;
      } catch {
        refused = true;
      }
      expect(refused || next === 't2').toBe(true);
    });
  }

  // Expected: when the answer to CompleteMultipartUpload is lost after the store completed the
  // object, and the retry is told NoSuchUpload, the client asks the store (HEAD) and finds the
  // object with the ETag these parts make (MD5 of the parts' MD5s, "-N"): the upload succeeded,
  // and close() must not say EIO for a file the bucket holds (docs/SEMANTICS.md tenet 1: "a
  // successful close() means the object exists" — and an EIO one that it does not). Today it
  // throws "may have stored the object; read it back to know", which the writer sees as EIO.
  it('a Complete whose answer was lost but that stored the object is reported stored', async () => {
    const partEtag = createHash('md5').update('part').digest('hex');
    const finalEtag = `${createHash('md5').update(Buffer.from(partEtag, 'hex')).digest('hex')}-1`;
    let completed = false;
    const server = await startLyingServer((req) => {
      if (req.method === 'POST' && req.url.searchParams.has('uploadId')) {
        if (!completed) {
          completed = true;
          return 'hang';
        }
        return { status: 404, body: xml('<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>') };
      }
      if (req.method === 'HEAD' && completed)
        return { headers: { etag: `"${finalEtag}"`, 'content-length': '4', 'last-modified': new Date().toUTCString() }, body: 'part' };
      return { status: 404, body: '' };
    });
    const client = clientFor(server.endpoint, { maxAttempts: 3, idleTimeoutMs: 800 });
    const got = await within(client.completeMultipart('k', 'u1', [{ partNumber: 1, etag: partEtag }]), 8000);
    expect(got).toEqual({ value: { etag: finalEtag } });
  });
});

describe('a request sent again behind the caller', () => {
  // The pool sends a request once more, unseen by the retry rules, when a kept-alive connection
  // closes before any byte of the answer: "the server had closed it while idle". But the server
  // may have received and carried out the request (it crashed, or a proxy dropped the connection,
  // after the store acted). For CompleteMultipartUpload the second send is then told
  // NoSuchUpload, and the client reports the object missing — ENOENT from close() — for an upload
  // that completed. Expected: a non-idempotent call whose connection closed after it was sent is
  // not reported as "not found": it is sent again only as a lost answer (control-path.ts's own
  // rule, "a retry told the upload is gone says so instead of reporting the object missing").
  it('a Complete carried out on a connection that then closed is not reported as a missing object', async () => {
    let completed = false;
    const server = await startLyingServer((req) => {
      if (req.method === 'HEAD') return { headers: { etag: '"e"', 'content-length': '1' } };
      if (req.method === 'POST' && req.url.searchParams.has('uploadId')) {
        if (!completed) {
          completed = true;
          return 'drop';
        }
        return { status: 404, body: xml('<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>') };
      }
      return { status: 404 };
    });
    const client = clientFor(server.endpoint, { maxAttempts: 3, idleTimeoutMs: 800 });
    await client.head('warm'); // leaves a kept-alive connection in the control pool
    const got = await within(client.completeMultipart('k', 'u1', [{ partNumber: 1, etag: 'abc' }]), 8000);
    const kind = (got as { error?: { kind?: string } }).error?.kind;
    expect(kind, JSON.stringify(got)).not.toBe('not-found');
  });
});

describe('a request that waits for a connection', () => {
  // Control calls share CONTROL_SOCKETS connections; a directory rename keeps up to 8 copies × 8
  // part copies going, each as long as the store takes. A HEAD behind them waits for a free
  // connection — but it was signed before it waited, so its x-amz-date is as old as the wait, and
  // AWS refuses a request signed more than 15 minutes before it arrives (RequestTimeTooSkewed,
  // which the client reports as access denied → EACCES). Scaled down: copies that hold every
  // connection for 4 s, a HEAD queued behind them. Expected: a request is signed when it goes out
  // on a connection, so its x-amz-date is its sending time. Today it is the time it was queued.
  it('a request queued behind busy connections is signed when it is sent', async () => {
    const arrivals: { method: string; lagMs: number }[] = [];
    const { parseAmzDate } = await import('../../../lib/sigv4.ts');
    const server = await startLyingServer((req) => {
      arrivals.push({ method: req.method, lagMs: Date.now() - (parseAmzDate(String(req.headers['x-amz-date'])) ?? 0) });
      return req.method === 'HEAD' ? { headers: { etag: '"e"', 'content-length': '1' } } : 'hang';
    });
    // 4 control connections (clientFor's maxSockets); a copy that hangs holds one until the idle timeout.
    const client = clientFor(server.endpoint, { maxAttempts: 1, idleTimeoutMs: 4000 });
    const copies = Array.from({ length: 4 }, (_, i) => client.copy('src', `dst${i}`).catch(() => undefined));
    await new Promise((r) => setTimeout(r, 200));
    await client.head('k');
    await Promise.all(copies);
    const head = arrivals.find((a) => a.method === 'HEAD')!;
    // x-amz-date has whole seconds: allow 1 s of rounding and 1 s for a loaded machine.
    expect(head.lagMs).toBeLessThan(2000);
  });
});
