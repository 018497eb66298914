// Attack: an entry file replaced by a symbolic link to another file, then revalidated. Entry files
// are opened "never through a symbolic link put in its place" (docs/CACHING.md, "Disk hits from
// the page cache": "Every answer opens the file again, as a read would: never through a symbolic
// link put in its place"), and reads, mappings and promotions do so (O_NOFOLLOW). The 304
// revalidation's trailer rewrite (gateway/cache/disk-files.ts, rewriteTrailer) opens the entry
// with plain 'r+': it follows the link, truncates the link's target to the body's length and
// writes a trailer into it, as the gateway's user (often root).
//
// Expected: a file put in an entry's place is never written through; the link's target is left
// as it was (the entry is taken as gone, as a read takes it).

import { readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { entryFiles, get, origin } from './disk-lib.ts';
import { pattern, sleep, startGateway } from './gateway-lib.ts';

afterAll(runTeardowns);

const BODY = pattern(100_000, 3);

describe('a revalidated entry whose file was replaced by a symbolic link', () => {
  it('does not write through the link', async () => {
    let revalidations = 0;
    const port = await origin((req, res) => {
      const head = { 'cache-control': 'max-age=1', etag: '"v1"', 'content-type': 'application/octet-stream' };
      if (req.headers['if-none-match'] === '"v1"') {
        revalidations++;
        res.writeHead(304, head);
        res.end();
        return;
      }
      res.writeHead(200, { ...head, 'content-length': BODY.length });
      res.end(BODY);
    });
    const dir = await tempDir('gwmap2-reval-');
    const victimDir = await tempDir('gwmap2-victim-');
    const victim = join(victimDir, 'precious');
    const precious = Buffer.alloc(1024 * 1024, 'V');
    writeFileSync(victim, precious);
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${port}`, '--cache-dir', dir, '--workers', '1', '--mem-object-max', '0']);

    expect((await get(gw.port, '/obj')).body.equals(BODY)).toBe(true);
    let files: string[] = [];
    for (let i = 0; i < 50 && files.length === 0; i++) {
      files = entryFiles(dir);
      await sleep(100);
    }
    expect(files.length).toBe(1);
    unlinkSync(files[0]!);
    symlinkSync(victim, files[0]!);

    await sleep(1500); // stale: the next request revalidates
    const r = await get(gw.port, '/obj');
    expect(revalidations).toBeGreaterThan(0);
    await sleep(500);
    expect(r.status).toBe(200);
    const after = readFileSync(victim);
    expect(after.length, 'the link target was truncated').toBe(precious.length);
    expect(after.equals(precious), 'the link target was written').toBe(true);
  }, 30_000);
});
