// A proxy in front of the store that answers with weak ETags (`W/"…"`): CDNs and reverse proxies
// mark an ETag weak when a filter touched the answer, and some do it always. RFC 9110 §13.1.1:
// If-Match uses the strong comparison, so a weak ETag never matches; a proxy passing `If-Match`
// through to the store has it compare `"W/…"` with its own ETag: 412 every time.
//
// docs/SEMANTICS.md, "read": every GET after the first asks for the version open() saw (If-Match
// its ETag; where the store sends none, Last-Modified names the version). fuse/s3/s3-replies.ts
// stripQuotes turns `W/"abc"` into `W/abc`, and read-version.ts asks `If-Match: "W/abc"`: every
// readahead GET after a file's first MiB fails, and so does the read's own retry (ESTALE). The
// walker of a directory (next-file.ts guesses, which ask If-Match the listed ETag) meets the same.
//
// What a user sees behind such a proxy: `cat` of any file over 1 MiB fails part-way.

import { randomBytes } from 'node:crypto';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket } from '../mount-helpers.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { MiB, mibDigests, startDriver, walkBucket } from './ra3-lib.ts';
import { startProxy } from './rb-lib.ts';

const fuse = fuseAvailable();
const minio = await minioAvailable();

const weaken = (v: unknown) => (typeof v === 'string' && v.startsWith('"') ? `W/${v}` : v);

describe.runIf(fuse.ok && minio.ok)('behind a proxy that answers with weak ETags', () => {
  it('a walker reads every file whole and right', { timeout: 180_000 }, async () => {
    const F2 = randomBytes(4 * MiB);
    const { server, other } = await walkBucket(F2);
    const proxy = await startProxy(server, 'ra3', {
      answer: (_m, _k, _s, h) => {
        if (h.etag !== undefined) h.etag = weaken(h.etag) as string;
      },
      listing: (xml) => xml.replace(/<ETag>(&#34;|&quot;|")/g, '<ETag>W/$1'),
    });
    const m = await mountBucket(proxy.server, 'ra3');
    const d = await startDriver();
    const names = (await d.cmd({ op: 'listdir', path: `${m.dir}/d` })).names!.sort();
    const results: string[] = [];
    for (const n of names) {
      const want = await other.s3
        .send(new GetObjectCommand({ Bucket: 'ra3', Key: `d/${n}` }))
        .then(async (r) => Buffer.from(await r.Body!.transformToByteArray()));
      const got = await d.cmd({ op: 'readall', path: `${m.dir}/d/${n}` });
      const same = got.mibs !== undefined && JSON.stringify(got.mibs) === JSON.stringify(mibDigests(want));
      results.push(`${n}: ${got.err ?? (same ? 'ok' : `WRONG BYTES (${got.size} of ${want.length})`)}`);
    }
    const ifMatch = [...new Set(proxy.seen.filter((s) => s.ifMatch).map((s) => `${s.ifMatch} -> ${s.status}`))].slice(0, 4);
    const report = `${results.join(', ')}\nIf-Match sent (sample): ${ifMatch.join('; ')}`;
    console.log(report);
    expect(results.join(', ')).toBe(names.map((n) => `${n}: ok`).join(', '));
  });
});
