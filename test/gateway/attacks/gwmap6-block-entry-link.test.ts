// Attack: a stored S3 block's entry file replaced by another program with a symbolic link out of
// the cache, or with a FIFO, before a range read is answered from it.
//
// docs/CACHING.md ("Disk hits from the page cache"): "The file is opened never through a symbolic
// link put in its place, never waiting on a FIFO (such a file is taken as gone, as a read takes
// it)"; "Where things live": such entries are "never opened nor followed". Whole-object hits open
// entry files with openEntryFile (O_NOFOLLOW | O_NONBLOCK); a block read from a stored block opens
// it with a plain `open(found.path, 'r')` (blocks.ts copyStored). So a link planted at a block's
// path serves the link target's bytes as the object's, and a FIFO holds a thread of the pool for
// ever: four of them and the worker answers no disk hit at all.
// Expected: the range comes from the store (the object's bytes); other hits go on being answered.

import { closeSync, constants, openSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { entryFiles, workers } from './disk-lib.ts';
import { sleep } from './gateway-lib.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct, send } from './s3-harness.ts';

afterAll(runTeardowns);

const MiB = 2 ** 20;
const text = (n: number, seed: string) => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);
function unblock(path: string): void {
  try {
    closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK));
  } catch {
    // nobody waits on it
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const withTimeout = <T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> => Promise.race([p, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms))]);

describe('a stored block replaced by a link or a FIFO', () => {
  it('never serves the link target', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const g = await startS3Gw(store, ['--s3-block-size', '1MiB']);
    const cred = await g.issue(`${BUCKET}/run42/`);
    const key = `/${BUCKET}/run42/blocky.bin`;
    const body = text(3 * MiB, 'the-object-bytes-');
    expect((await direct(store, 'PUT', key, body)).status).toBe(200);
    expect((await send(g.gw, cred, 'GET', key, { headers: { range: 'bytes=0-99' } })).body).toBe(body.slice(0, 100));
    const [file] = entryFiles(g.cacheDir);
    expect(entryFiles(g.cacheDir)).toHaveLength(1);
    // Same length as the entry file, so nothing looks short.
    const outside = await tempDir('gwmap6-secret-');
    const secret = join(outside, 'secret');
    writeFileSync(secret, Buffer.concat([Buffer.from('TOP-SECRET-'.repeat(200)), readFileSync(file!)]).subarray(0, readFileSync(file!).length), { mode: 0o600 });
    rmSync(file!);
    symlinkSync(secret, file!);
    const r = await send(g.gw, cred, 'GET', key, { headers: { range: 'bytes=0-99' } });
    expect(r.body.includes('TOP-SECRET'), `the link target served as the object (${String(r.headers['cache-status'])})`).toBe(false);
    expect(r.body).toBe(body.slice(0, 100));
  }, 30_000);

  it('does not hang on a FIFO, nor stop other disk hits', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const g = await startS3Gw(store, ['--s3-block-size', '1MiB']);
    const cred = await g.issue(`${BUCKET}/run42/`);
    const body = text(3 * MiB, 'fifo-object-bytes-');
    const keys = [0, 1, 2, 3, 4].map((i) => `/${BUCKET}/run42/fifo-${i}.bin`);
    for (const k of keys) {
      expect((await direct(store, 'PUT', k, body)).status).toBe(200);
      expect((await send(g.gw, cred, 'GET', k, { headers: { range: 'bytes=0-99' } })).status).toBe(206);
    }
    const other = `/${BUCKET}/run42/other.bin`;
    expect((await direct(store, 'PUT', other, 'o'.repeat(200_000))).status).toBe(200);
    expect((await send(g.gw, cred, 'GET', other)).status).toBe(200);
    const blocks = entryFiles(g.cacheDir).filter((f) => readFileSync(f).includes('fifo-object-bytes-'));
    expect(blocks).toHaveLength(5);
    for (const f of blocks) {
      rmSync(f);
      execFileSync('mkfifo', [f]);
    }
    // A worker whose pool thread waits on a FIFO never exits: the FIFOs are let go (a writer opens
    // and closes them) again and again while the gateway stops, and the worker is killed if it stays.
    const worker = workers(g.child.pid)[0];
    onTeardown(async () => {
      const timer = setInterval(() => blocks.forEach(unblock), 20);
      try {
        await g.child.stop('SIGTERM', 5000);
        for (let i = 0; worker !== undefined && i < 100 && alive(worker); i++) await sleep(50);
      } finally {
        clearInterval(timer);
      }
      if (worker !== undefined && alive(worker)) process.kill(worker, 'SIGKILL');
    });
    const ranged = await Promise.all(keys.map((k) => withTimeout(send(g.gw, cred, 'GET', k, { headers: { range: 'bytes=0-99' } }), 8000)));
    const hit = await withTimeout(send(g.gw, cred, 'GET', other, { headers: { range: 'bytes=0-99' } }), 5000);
    expect({
      ranged: ranged.map((r) => (r === 'timeout' ? 'hung' : `${r.status} ${r.body === body.slice(0, 100)}`)),
      otherHit: hit === 'timeout' ? 'hung' : hit.status,
    }).toEqual({ ranged: keys.map(() => '206 true'), otherHit: 206 });
  }, 60_000);
});
