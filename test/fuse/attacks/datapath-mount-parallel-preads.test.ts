// Threads pread-ing one open file of the mount at once, at offsets a few MiB apart, while the store
// sends its bodies slowly (a relay that trickles them): reads of one descriptor wait on readahead
// GETs still arriving while other reads of it run ahead and let go of the pieces behind them.
//
// Expected (docs/SEMANTICS.md: a reader sees the object's bytes; never wrong bytes): every pread
// returns the full length asked for, byte for byte the object's bytes at that offset.

import { PutObjectCommand } from '@aws-sdk/client-s3';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { s3Client } from '../../helpers/s3-smoke.ts';
import { startS3rver, type S3rverServer } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);

const MiB = 2 ** 20;
const SIZE = 48 * MiB;

/** A relay to the store that sends object bodies 64 KiB at a time, a few ms apart. */
async function trickle(upstream: S3rverServer) {
  const agent = new http.Agent({ keepAlive: true });
  const srv = http.createServer((req, res) => {
    const up = http.request(
      { host: '127.0.0.1', port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent },
      (ur) => {
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        if (req.method !== 'GET' || !req.headers.range) return void ur.pipe(res);
        ur.on('data', (c: Buffer) => {
          ur.pause();
          const parts: Buffer[] = [];
          for (let i = 0; i < c.length; i += 64 * 1024) parts.push(c.subarray(i, i + 64 * 1024));
          const next = () => {
            const p = parts.shift();
            if (!p) return void ur.resume();
            res.write(p);
            setTimeout(next, 8);
          };
          next();
        });
        ur.on('end', () => {
          const wait = () => (ur.isPaused() ? setTimeout(wait, 3) : res.end());
          wait();
        });
      },
    );
    up.on('error', () => res.socket?.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  onTeardown(async () => {
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
    agent.destroy();
  });
  const port = (srv.address() as AddressInfo).port;
  return { ...upstream, endpoint: `http://127.0.0.1:${port}`, port };
}

const SCRIPT = `
import os, struct, sys, threading
path, size = sys.argv[1], int(sys.argv[2])
MiB = 1 << 20
fd = os.open(path, os.O_RDONLY)
# No kernel readahead: the mount sees the reads the threads make.
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
bad = []
def check(off, n):
    b = os.pread(fd, n, off)
    want = b''.join(struct.pack('<I', o) for o in range(off, off + n, 4))
    if b != want:
        bad.append('%d+%d: got %d bytes%s' % (off, n, len(b), '' if len(b) != n else ' (other bytes)'))
# A sequential start grows the readahead window.
for off in range(0, 3 * MiB, 256 * 1024):
    check(off, 128 * 1024)
def worker(base):
    for step in range(48):
        check(base + step * 128 * 1024, 128 * 1024)
# One thread a little over BEHIND_SLACK (4 MiB) ahead of the other, both in the readahead run.
ts = [threading.Thread(target=worker, args=(3 * MiB + lag,)) for lag in (0, 4 * MiB + 128 * 1024, 4 * MiB + 384 * 1024, 4 * MiB + 768 * 1024, 5 * MiB)]
for t in ts: t.start()
for t in ts: t.join()
print('\\n'.join(bad) if bad else 'ok')
`;

describe.runIf(fuseAvailable())('datapath attack: parallel preads of one descriptor', () => {
  it('threads reading one fd a few MiB apart each get the file bytes', async () => {
    const s3 = await startS3rver({ buckets: ['preads'] });
    const body = Buffer.alloc(SIZE);
    for (let i = 0; i < SIZE; i += 4) body.writeUInt32LE(i, i);
    await s3Client(s3).send(new PutObjectCommand({ Bucket: 'preads', Key: 'big', Body: body }));
    const m = await mountBucket(await trickle(s3), 'preads');
    const script = join(await tempDir('estuary-preads-'), 'preads.py');
    await writeFile(script, SCRIPT);
    const r = await sh(`python3 '${script}' '${m.dir}/big' ${SIZE}`, undefined, 50_000);
    expect(r.out.trim()).toBe('ok');
  }, 60_000);
});
