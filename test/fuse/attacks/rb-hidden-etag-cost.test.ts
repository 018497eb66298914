// A proxy in front of the store that hides the ETag header (nginx `proxy_hide_header ETag`, some
// CDN and hardening setups) while the listing's XML still names each object's ETag.
//
// docs/SEMANTICS.md, "read" and "read, across files": a store (or proxy) that sends no ETag has
// its versions named by Last-Modified; "A wrong guess costs the bytes fetched (at most the window)
// and nothing else". Here the listing's ETag goes into If-Match (which the store honours: the
// bytes are right), but the answers carry no ETag to compare, so fuse/fs/reads.ts openForReading
// takes every file for "replaced since it was listed" (`got.head.etag !== known.etag`) and drops
// the window it asked for ahead with the open, and next-file.ts drops every guess of the next
// file (`listed(got.head)`): a walker (cp -r, tar) downloads most of each file twice.
// Measured against the same walk through the same proxy passing ETags.

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket } from '../mount-helpers.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { MiB, Other, startDriver } from './ra3-lib.ts';
import { startProxy } from './rb-lib.ts';

const fuse = fuseAvailable();
const minio = await minioAvailable();
const FILES = 6;
const SIZE = 24 * MiB;

describe.runIf(fuse.ok && minio.ok)('behind a proxy that hides the ETag header (the listing keeps it)', () => {
  it('a walker moves each file about once, as it does with ETags', { timeout: 240_000 }, async () => {
    const server = await startMinio({ buckets: ['rbkt'] });
    const other = new Other(server, 'rbkt');
    for (let i = 0; i < FILES; i++) await other.put(`d/g${i}`, randomBytes(SIZE));
    const moved: Record<string, number> = {};
    const errors: string[] = [];
    for (const hide of [false, true]) {
      const proxy = await startProxy(server, 'rbkt', {
        answer: (_m, _k, _s, h) => {
          if (hide) delete h.etag;
        },
      });
      const m = await mountBucket(proxy.server, 'rbkt');
      const d = await startDriver();
      await d.cmd({ op: 'listdir', path: `${m.dir}/d` });
      for (let i = 0; i < FILES; i++) {
        const r = await d.cmd({ op: 'readall', path: `${m.dir}/d/g${i}` });
        if (r.err || r.size !== SIZE) errors.push(`${hide ? 'hidden' : 'shown'} g${i}: ${r.err ?? r.size}`);
      }
      await m.child.stop('SIGTERM', 20_000);
      const bytes = proxy.seen.filter((s) => s.method === 'GET' && s.key.startsWith('d/')).reduce((a, s) => a + (s.bytes ?? 0), 0);
      moved[hide ? 'hidden' : 'shown'] = bytes / (FILES * SIZE);
    }
    const report = `bytes moved per byte read: ETag shown ${moved.shown!.toFixed(2)}, ETag hidden ${moved.hidden!.toFixed(2)}${errors.length ? `; errors: ${errors.join(', ')}` : ''}`;
    console.log(report);
    expect(errors, report).toEqual([]);
    expect(moved.hidden!, report).toBeLessThan(Math.max(1.25, moved.shown! * 1.2));
  });
});
