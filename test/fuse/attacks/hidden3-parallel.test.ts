// Many files removed while open at once, with a store whose answers to HEAD come back after
// different delays (a busy or distant S3), so the renames libfuse makes to `.fuse_hidden` names
// reach the mount far out of the order of their counts; then kill -9 of the mount while all are
// still open. docs/SEMANTICS.md, "unlink.": "nothing of the file is in the bucket under any name
// meanwhile, nor after a crash", and no file that was not removed may disappear.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { s3Client } from '../../helpers/s3-smoke.ts';
import { startS3rver, type S3Server } from '../../helpers/s3rver.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();
const OPS = new URL('./hidden3-ops.py', import.meta.url).pathname;

/**
 * A relay that, from the first HEAD of a `.fuse_hidden` key on (libfuse asks whether its hidden
 * name is free before the rename), holds each HEAD for a random 0..maxDelayMs.
 */
async function jitterRelay(upstream: S3Server, maxDelayMs: number): Promise<S3Server> {
  const agent = new http.Agent({ keepAlive: true });
  let on = false;
  const srv = http.createServer((req, res) => {
    if (req.method === 'HEAD' && (req.url ?? '').includes('.fuse_hidden')) on = true;
    const delay = on && req.method === 'HEAD' ? Math.random() * maxDelayMs : 0;
    setTimeout(() => {
      const up = http.request(
        { host: '127.0.0.1', port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent },
        (ur) => {
          res.writeHead(ur.statusCode ?? 502, ur.headers);
          ur.pipe(res);
        },
      );
      up.on('error', () => res.socket?.destroy());
      req.pipe(up);
    }, delay);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  onTeardown(async () => {
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
    agent.destroy();
  });
  return { ...upstream, endpoint: `http://127.0.0.1:${port}`, port };
}

describe.runIf(fuse.ok)('mount: 150 open files, each in its own directory, removed at once over a store with uneven HEAD latency, then kill -9', () => {
  it('leaves exactly the files that were not removed, with their bytes, and no .fuse_hidden key', async () => {
    const upstream = await startS3rver({ buckets: ['par'] });
    const server = await jitterRelay(upstream, 1000);
    const m = await mountBucket(server, 'par');
    const n = Number(process.env.N ?? 150);
    const r = await sh(`python3 '${OPS}' parallel '${m.dir}' ${n} ${m.child.pid}`, undefined, 50_000);
    expect(r.code, r.out).toBe(0);
    const seen = JSON.parse(r.out) as { errs: string[]; bad_reads: unknown[]; listing_open: string[] };
    await m.child.exited;
    const client = s3Client(upstream);
    const listed = await client.send(new ListObjectsV2Command({ Bucket: 'par' }));
    const left = new Map<string, string>();
    for (const o of listed.Contents ?? []) {
      const body = await client.send(new GetObjectCommand({ Bucket: 'par', Key: o.Key! }));
      left.set(o.Key!, await body.Body!.transformToString());
    }
    const want = new Map(Array.from({ length: n }, (_, i) => [`keep${i}`, `keep${i}`] as const));
    const dirs = new Set(Array.from({ length: n }, (_, i) => `d${i}`));
    for (const k of [...left.keys()]) if (dirs.has(k.replace(/\/$/, ''))) left.delete(k);
    expect(seen.errs).toEqual([]);
    expect(seen.bad_reads).toEqual([]);
    // Expected: the listing while the removed files were open showed only keep*, and after the
    // crash the bucket holds keep0..keep149 with their bytes and nothing else (no p*, no
    // .fuse_hidden*). A removal whose count reaches the mount more than 64 behind the highest
    // seen is taken for a user's rename and leaves the file in the bucket under its hidden name.
    const extra = [...left.keys()].filter((k) => !want.has(k));
    expect(extra, `keys that should not be there`).toEqual([]);
    expect(seen.listing_open.filter((k) => !want.has(k) && !dirs.has(k))).toEqual([]);
    expect(Object.fromEntries(left)).toEqual(Object.fromEntries(want));
  }, 60_000);
});
