// A full file system at the trailer. docs/CACHING.md, "When the disk fills up before --disk-cache
// does": "A write that fails with `ENOSPC` in the middle of a fill evicts 64 MiB of old entries and
// tries once more; if it fails again nothing is stored, the gateway stops trying to store for 10 s
// ... Only a client that already received part of the body sees its connection cut (as for any
// fill that fails midway); its retry passes through."
//
// A body without Content-Length that fits in the free space but leaves no room for its trailer:
// commit() fails with ENOSPC outside writeAt, so nothing is evicted, the disk is not marked full,
// and every client is cut after the whole body — the retry too, and every request after it, for
// as long as the free space stays the same. Expected: the retry (at the latest) gets the whole
// object, stored or passed through.

import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, statfsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { onTeardown } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { startGateway } from './gateway-lib.ts';
import { get, origin } from './disk-lib.ts';

async function tmpfs(sizeArg: string): Promise<string> {
  const dir = `${await tempDir('atk-gwdisk-mnt-')}/m`;
  mkdirSync(dir);
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeArg}`, 'tmpfs', dir]);
  onTeardown(() => {
    execFileSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

describe('ENOSPC when the trailer is appended', () => {
  it('the retry of a cut client gets the whole object', { timeout: 60_000 }, async () => {
    const mnt = await tmpfs('4m');
    let size = 0;
    const up = await origin((_req, res) => {
      // no Content-Length: chunked, so no free-space check can know the length beforehand
      res.writeHead(200, { 'cache-control': 'max-age=600' });
      res.end(Buffer.alloc(size, 0x62));
    });
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${up}`, '--cache-dir', mnt]);
    const st = statfsSync(mnt);
    size = Number(st.bavail) * Number(st.bsize);
    const outcomes: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await get(gw.port, '/fits-but-not-its-trailer', { host: 'o' });
      outcomes.push(`${r.status} ${r.body.length}${r.error ? ` ${r.error}` : ''} ${r.headers['cache-status'] ?? ''}`);
    }
    // The first may be cut (it began before the disk was found full); the retries may not.
    expect(outcomes.slice(1).map((o) => o.split(' ').slice(0, 2).join(' ')), outcomes.join('\n')).toEqual([
      `200 ${size}`,
      `200 ${size}`,
    ]);
    expect(outcomes.slice(1).every((o) => !/incomplete|aborted|ECONNRESET/.test(o)), outcomes.join('\n')).toBe(true);
  });
});
