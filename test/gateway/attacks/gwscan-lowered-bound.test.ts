// Attack on the index read after --disk-cache was lowered across a restart. docs/CACHING.md:
// "`--disk-cache` bounds what the files take on disk", and CONFIGURATION.md: "bytes kept on disk;
// least recently used objects go first". An entry file found by the read that is larger than the
// whole new bound is neither indexed nor deleted (DiskStore #merge ignores #put's refusal): it
// stays on disk for good, uncounted, unpurgeable, and found again at every start.

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { entryFiles, fileBlocks, get, origin } from './disk-lib.ts';
import { pattern, sleep, startGateway } from './gateway-lib.ts';

afterAll(runTeardowns);

describe('index read after --disk-cache was lowered', () => {
  it('an entry larger than the new bound is removed, so the disk holds no more than --disk-cache', async () => {
    const big = pattern(2 * 1024 * 1024, 7);
    const port = await origin((req, res) => {
      const body = req.url === '/big' ? big : Buffer.from('small');
      res.writeHead(200, { 'cache-control': 'max-age=86400', 'content-length': body.length });
      res.end(body);
    });
    const cacheDir = await tempDir('gwscan-bound-');
    const first = await startGateway(['--upstream', `o=http://127.0.0.1:${port}`, '--cache-dir', cacheDir]);
    expect((await get(first.port, '/big')).body.equals(big)).toBe(true);
    await sleep(300);
    await first.child.stop();
    expect(entryFiles(cacheDir)).toHaveLength(1);

    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${port}`, '--cache-dir', cacheDir, '--disk-cache', '1MiB']);
    await get(gw.port, '/small');
    await sleep(1500);
    // Expected: the 2 MiB entry cannot be kept under a 1 MiB bound, so it is deleted (or the
    // read at least counts it); today it stays on disk, in no index and no count.
    expect(fileBlocks(cacheDir)).toBeLessThanOrEqual(1024 * 1024);
    await gw.child.stop();
  }, 40_000);
});
