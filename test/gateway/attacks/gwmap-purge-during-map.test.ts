// Attack: a purge comes while the first disk hits on entries are mapping their files (between the
// index lookup and the mmap, while each file is being opened on the thread pool).
//
// Expected (docs/CACHING.md, "Disk hits from the page cache": "A mapping is let go when its entry
// leaves the index (eviction, purge, a newer version) and unmapped once the last answer writing
// from it has finished; until then its file's blocks stay allocated"): once the answers are done,
// no worker maps a purged entry's file, so its blocks are freed. Today the purge's drop finds no
// mapping yet, the mapping made a moment later is held anyway (keyed by a path no entry has any
// more), and the deleted file stays mapped — its blocks allocated — until 8,192 other bodies or
// 2 GiB push it out.
//
// To make the window wide every time, the worker's four pool threads are first held by hits on
// entry files replaced by FIFOs (see gwmap-fifo-entry.test.ts), so the hits' opens queue while
// the purges run; then rounds of hits and purges arriving together follow, as they come in use.

import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, readFileSync, rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { entryFiles, get, origin, workers } from './disk-lib.ts';
import { pattern, sleep, startGateway } from './gateway-lib.ts';
import { adminPost } from './gwindex2-lib.ts';

afterAll(runTeardowns);

const SIZE = 2 * 2 ** 20;
const TOKEN = 'attack-token-0123456789';
const ROUNDS = 4;
/** Objects stored, then hit and purged together, per round. */
const BURST = 16;

/** Mappings of deleted files under `dir` in process `pid`. */
function deletedMappings(pid: number, dir: string): string[] {
  return readFileSync(`/proc/${pid}/maps`, 'utf8')
    .split('\n')
    .filter((l) => l.includes(dir) && l.endsWith('(deleted)'));
}

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

describe('a purge while the first hits on entries map their files', () => {
  it('leaves no mapping of the purged files once the answers are done', async () => {
    const body = pattern(SIZE, 5);
    const port = await origin((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'max-age=86400', 'content-length': SIZE });
      res.end(body);
    });
    const dir = await tempDir('gwmap-purge-');
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${port}`, '--cache-dir', dir, '--workers', '1', '--admin-token', TOKEN]);
    const worker = workers(gw.child.pid)[0] ?? gw.child.pid;

    // Held pool: four FIFO hits, then hits whose opens queue, then purges, then the pool is let go.
    const holders = ['/h/1', '/h/2', '/h/3', '/h/4'];
    for (const p of holders) expect((await get(gw.port, p)).status).toBe(200);
    const fifos: string[] = [];
    for (const f of entryFiles(dir)) {
      rmSync(f);
      execFileSync('mkfifo', [f]);
      fifos.push(f);
    }
    // Let go again and again until the worker has exited: a worker whose pool thread waits on a
    // FIFO never exits, and would outlive the test.
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
    const first = Array.from({ length: BURST }, (_, j) => `/p/${j}`);
    for (const p of first) expect((await get(gw.port, p)).status).toBe(200);
    const held = holders.map((p) => get(gw.port, p));
    await sleep(300);
    const hits = first.map((p) => get(gw.port, p));
    await sleep(300);
    const purged = first.map((p) => adminPost(gw.port, TOKEN, 'purge', { url: p }));
    await sleep(300);
    fifos.forEach(unblock);
    for (const a of await Promise.all(hits)) if (a.status === 200 && a.error === undefined) expect(a.body.equals(body)).toBe(true);
    await Promise.all([...purged, ...held]);

    for (let i = 0; i < ROUNDS; i++) {
      const paths = Array.from({ length: BURST }, (_, j) => `/r/${i}/${j}`);
      for (const p of paths) expect((await get(gw.port, p)).status).toBe(200);
      const together = paths.map((p) => get(gw.port, p));
      const purges = paths.map((p) => adminPost(gw.port, TOKEN, 'purge', { url: p }));
      for (const a of await Promise.all(together)) if (a.status === 200 && a.error === undefined) expect(a.body.equals(body)).toBe(true);
      await Promise.all(purges);
    }
    await sleep(500);
    // Hits that came after a purge stored their object again: those files are live entries, and
    // only deleted files are looked for.
    expect(deletedMappings(worker, dir)).toEqual([]);
  }, 50_000);
});
