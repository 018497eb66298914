// Attack: an entry file rewritten in place by another program (`cp other entry`, a restore, an
// editor: opened with O_TRUNC and written again, same inode, same length). A held mapping is kept
// while the file has the same inode and is at least the body's length (mapped-bodies.ts, reopen
// and intact), and its last 64 bytes come from a copy taken when it was mapped: the answer is then
// the new file's bytes but for the old file's last 64 — a body that is neither version, sent as
// complete, on every hit.
//
// Expected: an answer is one version of the body, never a mix. A read from disk sends what the
// file holds; a file replaced by another program is let go and mapped anew (docs/CACHING.md,
// "Disk hits from the page cache": "One cut short, removed or replaced by another program since
// is let go"). A file cut to zero and written again was cut short meanwhile.

import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { entryFiles, get, metric, origin } from './disk-lib.ts';
import { pattern, sleep, startGateway } from './gateway-lib.ts';

afterAll(runTeardowns);

const OLD = pattern(200_000, 1);
const NEW = pattern(200_000, 2);

describe('an entry file rewritten in place', () => {
  it('is never answered as a mix of two versions', async () => {
    const port = await origin((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'max-age=86400', 'content-length': OLD.length });
      res.end(OLD);
    });
    const dir = await tempDir('gwmap2-inplace-');
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${port}`, '--cache-dir', dir, '--workers', '1', '--mem-object-max', '0']);
    expect((await get(gw.port, '/obj')).body.equals(OLD)).toBe(true);
    expect((await get(gw.port, '/obj')).body.equals(OLD)).toBe(true);
    // A hit right after the miss may still find the fill being committed (its fsync): ask until
    // one is answered from the disk entry, so mapped.
    for (let i = 0; i < 30 && (await metric(gw.port, 'estuary_gateway_disk_mapped_bytes')) === 0; i++) {
      await get(gw.port, '/obj');
      await sleep(100);
    }
    expect(await metric(gw.port, 'estuary_gateway_disk_mapped_bytes')).toBeGreaterThan(0);
    const files = entryFiles(dir);
    expect(files.length).toBe(1);

    // Same inode, cut to zero and written again: the new body, then the old trailer.
    const whole = readFileSync(files[0]!);
    writeFileSync(files[0]!, Buffer.concat([NEW, whole.subarray(OLD.length)]));
    await sleep(100);

    for (let i = 0; i < 3; i++) {
      const r = await get(gw.port, '/obj');
      expect(r.status).toBe(200);
      const mix = Buffer.concat([NEW.subarray(0, NEW.length - 64), OLD.subarray(OLD.length - 64)]);
      const which = r.body.equals(OLD) ? 'old' : r.body.equals(NEW) ? 'new' : r.body.equals(mix) ? 'a mix (new but the old last 64 bytes)' : 'a mix';
      expect(which, `hit ${i}: ${r.body.length} bytes, complete=${r.error === undefined}`).toMatch(/^(old|new)$/);
    }
  }, 30_000);
});
