// Attack: another program replaces a stored entry's file with a symbolic link to a file outside
// the cache (here a 2 MiB "secret" of the test's own), before the first disk hit maps it.
//
// Expected (docs/CACHING.md, "Where things live": something other than a regular file among the
// entries, "a symbolic link, a FIFO, a device, a directory: never opened nor followed"; and an
// entry whose file is damaged or vanished is dropped and goes to the origin): the hit is answered
// with the origin's bytes, never with the link target's. Today MappedBodies.lend opens the path
// following the link, maps the target's first bytes and serves them as the object, and keeps
// serving them from the held mapping. (The read path, serveStored, opens it the same way.)

import { randomBytes } from 'node:crypto';
import { rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { entryFiles, get, origin } from './disk-lib.ts';
import { pattern, startGateway } from './gateway-lib.ts';

afterAll(runTeardowns);

const SIZE = 2 * 2 ** 20 + 512;

describe('an entry file replaced by a symbolic link out of the cache', () => {
  it('never serves the link target as the object', async () => {
    const body = pattern(SIZE, 13);
    const port = await origin((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'max-age=86400', 'content-length': SIZE });
      res.end(body);
    });
    const outside = await tempDir('gwmap-secret-');
    const secret = join(outside, 'secret');
    const secretBytes = randomBytes(SIZE + 4096);
    writeFileSync(secret, secretBytes, { mode: 0o600 });
    const dir = await tempDir('gwmap-link-');
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${port}`, '--cache-dir', dir, '--workers', '1']);
    expect((await get(gw.port, '/obj')).body.equals(body)).toBe(true);
    const [file] = entryFiles(dir);
    rmSync(file!);
    symlinkSync(secret, file!);
    for (let i = 0; i < 2; i++) {
      const r = await get(gw.port, '/obj');
      expect(r.body.subarray(0, 64).equals(secretBytes.subarray(0, 64)), 'the link target served as the object').toBe(false);
      if (r.status === 200 && r.error === undefined) expect(r.body.equals(body)).toBe(true);
    }
  }, 30_000);
});
