// Attack: another program replaces stored entries' files with FIFOs (mkfifo at the same path),
// then clients ask for those objects.
//
// Expected (docs/CACHING.md, "Disk hits from the page cache": a hit maps the entry file only when
// it is all in the page cache, "otherwise ... is read through the thread pool"; an entry whose
// file vanished or is damaged is dropped and goes to the origin): each such hit is answered (from
// the origin), and the worker's other disk hits go on. Today the mapping's open() of the entry file
// waits for a writer on the FIFO, for ever, on a thread of the worker's pool: the client hangs,
// and four of them take every thread, after which no disk hit of that worker is answered at all.

import { execFileSync } from 'node:child_process';
import { openSync, closeSync, constants, rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { entryFiles, get, origin, workers } from './disk-lib.ts';
import { pattern, sleep, startGateway } from './gateway-lib.ts';
import { readMeta } from './gwindex2-lib.ts';

afterAll(runTeardowns);

/** Lets a reader waiting on the FIFO at `path` go on (a writer opens and closes it). */
function unblock(path: string): void {
  try {
    closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK));
  } catch {
    // nobody reading it
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

const SIZE = 2 * 2 ** 20;

describe('entry files replaced by FIFOs', () => {
  it('answers those hits from the origin and keeps serving other disk hits', async () => {
    const body = (p: string) => pattern(SIZE, p.length + p.charCodeAt(p.length - 1));
    const port = await origin((req, res) => {
      const b = body(req.url ?? '/');
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'max-age=86400', 'content-length': b.length });
      res.end(b);
    });
    const dir = await tempDir('gwmap-fifo-');
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${port}`, '--cache-dir', dir, '--workers', '1']);
    const paths = ['/f/1', '/f/2', '/f/3', '/f/4', '/f/5', '/ok'];
    for (const p of paths) expect((await get(gw.port, p)).status).toBe(200);
    const fifos: string[] = [];
    for (const f of entryFiles(dir)) {
      if (readMeta(f).url.endsWith('/ok')) continue;
      rmSync(f);
      execFileSync('mkfifo', [f]);
      fifos.push(f);
    }
    // Whatever is left waiting on a FIFO is let go at the end (a writer opens and closes it), again
    // and again until the worker has exited: a worker whose pool thread waits on a FIFO never
    // exits (its main thread waits for that thread), and would outlive the test.
    const worker = workers(gw.child.pid)[0]!;
    onTeardown(async () => {
      const timer = setInterval(() => fifos.forEach(unblock), 20);
      try {
        await gw.child.stop();
        for (let i = 0; i < 100 && alive(worker); i++) await sleep(50);
      } finally {
        clearInterval(timer);
      }
      if (alive(worker)) process.kill(worker, 'SIGKILL');
    });
    const pending = Promise.all(paths.slice(0, 5).map((p) => get(gw.port, p, {}, 6000)));
    await sleep(500);
    // A hit on an object whose file is intact, while those wait.
    const ok = await get(gw.port, '/ok', {}, 4000);
    expect(ok.error, '/ok').toBeUndefined();
    expect(ok.body.equals(body('/ok'))).toBe(true);
    const answers = await pending;
    for (const [i, a] of answers.entries()) {
      expect(a.error, paths[i]).toBeUndefined();
      expect(a.body.equals(body(paths[i]!))).toBe(true);
    }
  }, 30_000);
});
