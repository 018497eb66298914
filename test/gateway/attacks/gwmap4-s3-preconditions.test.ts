// Attack: preconditions a client sends with a GetObject are ignored when the object is answered
// from the cache (a mapped disk hit, the path every whole-body hit of an object over 1 MiB takes).
//
// S3 answers `If-Match` naming another ETag, and `If-Unmodified-Since` before the object's
// Last-Modified, with `412 PreconditionFailed` (S3 API, GetObject; RFC 9110 §13.1.1, §13.1.4), for
// a GET and a HEAD alike, ranged or not; boto3's download_file, `estuary stage` resuming a download
// (docs/STAGING.md: "continues from its size with `If-Match` on the ETag it started with") and
// `estuary mount` (docs/SEMANTICS.md: "Every GET of an open file asks for the version `open()` saw
// (`If-Match` with its ETag") rely on that to never splice two versions. A range with `If-Range`
// naming another ETag must be answered with the whole object (200), never a 206 of a version the
// client does not hold (RFC 9110 §13.1.5): curl -C and wget -c resume that way. docs/STAGING.md
// lists these as "conditional requests" that take "the whole-object way", i.e. the cache.
//
// Today the cached answer ignores all three: 200 (or 206) with the cached version's bytes.

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { metric } from './disk-lib.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct, send } from './s3-harness.ts';

afterAll(runTeardowns);

const text = (n: number, seed: string) => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);
const KEY = `/${BUCKET}/run42/pre.bin`;
const PAST = 'Mon, 01 Jan 2001 00:00:00 GMT';

async function rig() {
  const store = await startS3rver({ buckets: [BUCKET] });
  const g = await startS3Gw(store);
  const cred = await g.issue(`${BUCKET}/run42/`);
  const body = text(2 * 2 ** 20, 'precondition-0123456789/');
  expect((await direct(store, 'PUT', KEY, body)).status).toBe(200);
  const first = await send(g.gw, cred, 'GET', KEY);
  expect(first.status).toBe(200);
  const hit = await send(g.gw, cred, 'GET', KEY);
  expect(hit.body === body && /hit/.test(String(hit.headers['cache-status']))).toBe(true);
  // The hit was answered from a mapping of the entry file.
  expect(await metric(g.port, 'estuary_gateway_disk_mapped_bytes')).toBeGreaterThan(0);
  return { store, g, cred, body, etag: String(first.headers.etag) };
}

describe('S3 preconditions on cached (mapped) objects', () => {
  it('If-Match naming another ETag and If-Unmodified-Since before the object answer 412 PreconditionFailed', async () => {
    const { g, cred } = await rig();
    const failed: string[] = [];
    const cases: [string, Record<string, string>][] = [
      ['GET If-Match', { 'if-match': '"0123456789abcdef0123456789abcdef"' }],
      ['GET If-Unmodified-Since', { 'if-unmodified-since': PAST }],
      ['GET range If-Match', { range: 'bytes=0-99', 'if-match': '"0123456789abcdef0123456789abcdef"' }],
    ];
    for (const [name, headers] of cases) {
      const r = await send(g.gw, cred, 'GET', KEY, { headers });
      if (r.status !== 412 || !r.body.includes('<Code>PreconditionFailed</Code>')) failed.push(`${name}: ${r.status} ${r.headers['cache-status']} (${r.body.length} bytes)`);
    }
    const h = await send(g.gw, cred, 'HEAD', KEY, { headers: { 'if-match': '"0123456789abcdef0123456789abcdef"' } });
    if (h.status !== 412) failed.push(`HEAD If-Match: ${h.status}`);
    expect(failed).toEqual([]);
  }, 40_000);

  it('a range with If-Range naming another ETag gets the whole object, not a 206', async () => {
    const { g, cred, body, etag } = await rig();
    // The matching validator still gets its range.
    const same = await send(g.gw, cred, 'GET', KEY, { headers: { range: 'bytes=100-199', 'if-range': etag } });
    expect(same.status).toBe(206);
    expect(same.body).toBe(body.slice(100, 200));
    const other = await send(g.gw, cred, 'GET', KEY, { headers: { range: 'bytes=100-199', 'if-range': '"0123456789abcdef0123456789abcdef"' } });
    expect({ status: other.status, whole: other.body === body }).toEqual({ status: 200, whole: true });
  }, 40_000);
});
