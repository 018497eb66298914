// The aws-chunked decoder without a network: AWS's documented signed-streaming example, the
// framing the JS SDK v3 and botocore write (trailer checksums of every algorithm), and malformed
// bodies, each of which must end in one S3 error, never a crash or a silently short object.

import { createHash, createHmac } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  AwsChunkedDecoder,
  ChunkedError,
  type ChunkedOptions,
  STREAMING_SIGNED,
  STREAMING_SIGNED_TRAILER,
  STREAMING_UNSIGNED_TRAILER,
} from '../../../gateway/s3/aws-chunked.ts';
import { checksumFor } from '../../../gateway/s3/checksums.ts';
import { signingKey } from '../../../lib/sigv4.ts';

// https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-streaming.html: 66560 bytes of 'a' in
// 64 KiB chunks, with the seed signature and chunk signatures the page lists.
const EXAMPLE = {
  key: signingKey('wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', '20130524', 'us-east-1', 's3'),
  amzDate: '20130524T000000Z',
  scope: '20130524/us-east-1/s3/aws4_request',
  seed: '4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9',
};
const EXAMPLE_SIGS = [
  'ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648',
  '0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497',
  'b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9',
];

function exampleBody(sigs = EXAMPLE_SIGS): Buffer {
  const a = (n: number) => Buffer.alloc(n, 'a');
  return Buffer.concat([
    Buffer.from(`10000;chunk-signature=${sigs[0]}\r\n`),
    a(65536),
    Buffer.from(`\r\n400;chunk-signature=${sigs[1]}\r\n`),
    a(1024),
    Buffer.from(`\r\n0;chunk-signature=${sigs[2]}\r\n\r\n`),
  ]);
}

/** Decodes `body` fed in pieces of `step` bytes; the data, or the ChunkedError it ended with. */
function decode(o: ChunkedOptions, body: Buffer, step = body.length): Buffer | ChunkedError {
  try {
    const d = new AwsChunkedDecoder(o);
    const out: Buffer[] = [];
    for (let i = 0; i < body.length; i += step) out.push(...d.push(body.subarray(i, i + step)));
    d.end();
    return Buffer.concat(out);
  } catch (err) {
    if (err instanceof ChunkedError) return err;
    throw err;
  }
}

/** The JS SDK v3's framing (getAwsChunkedEncodingStream): one chunk per source chunk, lower-case hex. */
function sdkBody(parts: Buffer[], trailer?: [string, string]): Buffer {
  const out: Buffer[] = [];
  for (const p of parts) out.push(Buffer.from(`${p.length.toString(16)}\r\n`), p, Buffer.from('\r\n'));
  out.push(Buffer.from('0\r\n'));
  if (trailer) out.push(Buffer.from(`${trailer[0]}:${trailer[1]}\r\n\r\n`));
  return Buffer.concat(out);
}

const unsigned = (decodedLength: number, trailer = 'x-amz-checksum-crc32'): ChunkedOptions => ({
  payload: STREAMING_UNSIGNED_TRAILER,
  decodedLength,
  trailer,
});

function crc32b64(b: Buffer): string {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(crc32(b));
  return out.toString('base64');
}

describe('aws-chunked decoding', () => {
  it("verifies AWS's documented signed-streaming example, fed whole or a byte at a time", () => {
    const o = { payload: STREAMING_SIGNED, decodedLength: 66560, signing: EXAMPLE };
    for (const step of [1e9, 1, 7, 65_537]) {
      const out = decode(o, exampleBody(), step);
      expect(out).toBeInstanceOf(Buffer);
      expect((out as Buffer).equals(Buffer.alloc(66560, 'a'))).toBe(true);
    }
  });

  it('refuses a chunk whose signature does not chain from the request signature', () => {
    const o = { payload: STREAMING_SIGNED, decodedLength: 66560, signing: EXAMPLE };
    const bad = [...EXAMPLE_SIGS];
    bad[1] = bad[1]!.replace(/^0/, '1');
    expect(decode(o, exampleBody(bad))).toMatchObject({ s3Code: 'SignatureDoesNotMatch' });
    expect(decode({ ...o, signing: { ...EXAMPLE, seed: EXAMPLE_SIGS[0]! } }, exampleBody())).toMatchObject({ s3Code: 'SignatureDoesNotMatch' });
    // Changed data under a correct signature.
    const body = exampleBody();
    body[200] = 0x62;
    expect(decode(o, body)).toMatchObject({ s3Code: 'SignatureDoesNotMatch' });
  });

  it('checks the signed trailer and its checksum', () => {
    const data = Buffer.from('hello trailer');
    const hmac = (text: string) => createHmacHex(EXAMPLE.key, text);
    const chunkSig = (prev: string, d: Buffer) =>
      hmac(['AWS4-HMAC-SHA256-PAYLOAD', EXAMPLE.amzDate, EXAMPLE.scope, prev, sha256(Buffer.alloc(0)), sha256(d)].join('\n'));
    const s1 = chunkSig(EXAMPLE.seed, data);
    const s2 = chunkSig(s1, Buffer.alloc(0));
    const trailer = `x-amz-checksum-crc32:${crc32b64(data)}`;
    const tsig = hmac(['AWS4-HMAC-SHA256-TRAILER', EXAMPLE.amzDate, EXAMPLE.scope, s2, sha256(Buffer.from(`${trailer}\n`))].join('\n'));
    const body = (sig: string) =>
      Buffer.concat([
        Buffer.from(`${data.length.toString(16)};chunk-signature=${s1}\r\n`),
        data,
        Buffer.from(`\r\n0;chunk-signature=${s2}\r\n${trailer}\r\nx-amz-trailer-signature:${sig}\r\n\r\n`),
      ]);
    const o = { payload: STREAMING_SIGNED_TRAILER, decodedLength: data.length, trailer: 'x-amz-checksum-crc32', signing: EXAMPLE };
    expect((decode(o, body(tsig)) as Buffer).toString()).toBe('hello trailer');
    expect(decode(o, body(s1))).toMatchObject({ s3Code: 'SignatureDoesNotMatch' });
  });

  it('computes each checksum to its catalogue check value (CRC RevEng) or digest', () => {
    const check = Buffer.from('123456789');
    const hex = (name: string) => {
      const c = checksumFor(name)!;
      // In two pieces, as a body arrives.
      c.update(check.subarray(0, 4));
      c.update(check.subarray(4));
      return c.digest().toString('hex');
    };
    expect(hex('x-amz-checksum-crc32')).toBe('cbf43926');
    expect(hex('x-amz-checksum-crc32c')).toBe('e3069283');
    expect(hex('x-amz-checksum-crc64nvme')).toBe('ae8b14860a799888');
    expect(hex('x-amz-checksum-sha1')).toBe(createHash('sha1').update(check).digest('hex'));
    expect(hex('X-Amz-Checksum-SHA256')).toBe(sha256(check));
    expect(checksumFor('x-amz-checksum-md5')).toBeUndefined();
  });

  it('decodes the SDK framing with every trailer checksum, and refuses a wrong one', () => {
    const parts = [Buffer.from('a'.repeat(1000)), Buffer.from('b'.repeat(70_000)), Buffer.from('c')];
    const all = Buffer.concat(parts);
    for (const name of ['x-amz-checksum-crc32', 'x-amz-checksum-crc32c', 'x-amz-checksum-crc64nvme', 'x-amz-checksum-sha1', 'x-amz-checksum-sha256']) {
      const c = checksumFor(name)!;
      c.update(all);
      const b64 = c.digest().toString('base64');
      const out = decode(unsigned(all.length, name), sdkBody(parts, [name, b64]), 4096);
      expect((out as Buffer).equals(all), name).toBe(true);
      const wrong = decode(unsigned(all.length, name), sdkBody(parts, [name, crc32b64(Buffer.from('x'))]));
      expect(wrong, name).toMatchObject({ s3Code: 'BadDigest' });
    }
  });

  it("decodes botocore's framing: 1 MiB chunks, the empty final chunk, the trailer", () => {
    const data = Buffer.alloc(1024 * 1024 + 5, 'z');
    const body = Buffer.concat([
      Buffer.from('100000\r\n'),
      data.subarray(0, 1024 * 1024),
      Buffer.from('\r\n5\r\n'),
      data.subarray(1024 * 1024),
      Buffer.from(`\r\n0\r\nx-amz-checksum-crc32:${crc32b64(data)}\r\n\r\n`),
    ]);
    expect((decode(unsigned(data.length), body, 65_536) as Buffer).equals(data)).toBe(true);
  });

  it('accepts the SDK body that ends right after the last chunk when no checksum was announced', () => {
    const o = { payload: STREAMING_UNSIGNED_TRAILER, decodedLength: 5 };
    expect((decode(o, Buffer.from('5\r\nhello\r\n0\r\n')) as Buffer).toString()).toBe('hello');
  });

  it('answers malformed bodies with one S3 error each', () => {
    const ok = crc32b64(Buffer.from('hello'));
    const cases: [string, Buffer, ChunkedOptions, string][] = [
      ['bad chunk size', Buffer.from('zz\r\nhello\r\n'), unsigned(5), 'InvalidRequest'],
      ['negative size', Buffer.from('-5\r\nhello\r\n'), unsigned(5), 'InvalidRequest'],
      ['size over the decoded length', Buffer.from('6\r\nhello!\r\n'), unsigned(5), 'InvalidRequest'],
      ['huge size', Buffer.from('ffffffffffffffff\r\n'), unsigned(5), 'InvalidRequest'],
      ['oversize chunk header', Buffer.from(`5${' '.repeat(10_000)}`), unsigned(5), 'InvalidRequest'],
      ['bare LF', Buffer.from('5\nhello\r\n'), unsigned(5), 'InvalidRequest'],
      ['data longer than declared', Buffer.from('4\r\nhello\r\n'), unsigned(5), 'InvalidRequest'],
      ['truncated data', Buffer.from('5\r\nhel'), unsigned(5), 'IncompleteBody'],
      ['no final chunk', Buffer.from('5\r\nhello\r\n'), unsigned(5), 'IncompleteBody'],
      ['short of the decoded length', Buffer.from(`5\r\nhello\r\n0\r\nx-amz-checksum-crc32:${ok}\r\n\r\n`), unsigned(6), 'IncompleteBody'],
      ['trailer missing', Buffer.from('5\r\nhello\r\n0\r\n\r\n'), unsigned(5), 'InvalidRequest'],
      ['trailer cut off', Buffer.from(`5\r\nhello\r\n0\r\nx-amz-checksum-crc32:${ok}`), unsigned(5), 'IncompleteBody'],
      ['unannounced trailer', Buffer.from(`5\r\nhello\r\n0\r\nx-amz-meta-a:1\r\nx-amz-checksum-crc32:${ok}\r\n\r\n`), unsigned(5), 'InvalidRequest'],
      ['bytes after the end', Buffer.from(`5\r\nhello\r\n0\r\nx-amz-checksum-crc32:${ok}\r\n\r\nmore`), unsigned(5), 'InvalidRequest'],
      ['signature on an unsigned chunk', Buffer.from(`5;chunk-signature=${'0'.repeat(64)}\r\nhello\r\n`), unsigned(5), 'InvalidRequest'],
      ['unsigned chunk in a signed body', Buffer.from('5\r\nhello\r\n'), { payload: STREAMING_SIGNED, decodedLength: 5, signing: EXAMPLE }, 'InvalidRequest'],
      ['unknown trailer algorithm', Buffer.from('5\r\nhello\r\n'), unsigned(5, 'x-amz-checksum-md5'), 'InvalidRequest'],
      ['SigV4a streaming', Buffer.from(''), { payload: 'STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD', decodedLength: 5 }, 'NotImplemented'],
      ['no decoded length', Buffer.from(''), { ...unsigned(5), decodedLength: Number.NaN }, 'MissingContentLength'],
    ];
    for (const [what, body, o, code] of cases) {
      for (const step of [body.length || 1, 1]) {
        const out = decode(o, body, step);
        expect(out, what).toBeInstanceOf(ChunkedError);
        expect((out as ChunkedError).s3Code, what).toBe(code);
        expect((out as ChunkedError).message, what).not.toContain('\n');
      }
    }
  });
});

function sha256(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

function createHmacHex(key: Buffer, text: string): string {
  return createHmac('sha256', key).update(text).digest('hex');
}
