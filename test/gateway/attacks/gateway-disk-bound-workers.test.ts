// The --disk-cache bound with two workers storing at once, and after a restart that rebuilds the
// index from the trailers. docs/CACHING.md: "`--disk-cache` bounds what the files take on disk:
// each entry counts its body and its trailer, rounded up to whole 4 KiB blocks".

import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp.ts';
import { startGateway, sleep } from './gateway-lib.ts';
import { entryFiles, fileBlocks, get, origin } from './disk-lib.ts';

const KiB = 1024;
const MiB = 1024 * KiB;

describe('--disk-cache with --workers 2', () => {
  it('the entry files stay within --disk-cache while both workers store, and after a restart', { timeout: 60_000 }, async () => {
    const sizes = [0, 4096 - 300, 4096, 4097, 40 * KiB, 100 * KiB];
    const up = await origin((req, res) => {
      const n = sizes[Number(/\/(\d+)$/.exec(req.url ?? '')?.[1] ?? 0) % sizes.length]!;
      res.writeHead(200, { 'content-length': String(n), 'cache-control': 'max-age=600' });
      res.end(Buffer.alloc(n, 0x63));
    });
    const dir = await tempDir('atk-gwdisk-');
    const args = ['--upstream', `o=http://127.0.0.1:${up}`, '--cache-dir', dir, '--disk-cache', '1MiB', '--workers', '2'];
    let gw = await startGateway(args);
    let next = 0;
    let peak = 0;
    let done = false;
    const load = Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < 300) {
          const i = next++;
          const r = await get(gw.port, `/o/${i}`, { host: 'o' });
          expect(r.status).toBe(200);
        }
      }),
    ).finally(() => (done = true));
    while (!done) {
      peak = Math.max(peak, fileBlocks(`${dir}/v1`) - fileBlocks(`${dir}/v1/tmp`));
      await sleep(20);
    }
    await load;
    await sleep(500);
    const settled = fileBlocks(`${dir}/v1`);
    await gw.child.stop();
    gw = await startGateway(args);
    await sleep(500);
    const afterRestart = fileBlocks(`${dir}/v1`);
    const note = `peak ${peak}, settled ${settled}, after restart ${afterRestart}, ${entryFiles(dir).length} files`;
    // A little room for entries in flight between the two workers' indexes.
    expect(settled, note).toBeLessThanOrEqual(MiB);
    expect(afterRestart, note).toBeLessThanOrEqual(MiB);
    expect(peak, note).toBeLessThanOrEqual(MiB + 256 * KiB);
  });
});
