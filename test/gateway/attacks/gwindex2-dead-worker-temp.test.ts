// Attack (holds today; a regression test): a worker is SIGKILLed while it writes a large body to
// <cache-dir>/v1/tmp/ (a fill in flight when it dies) and its replacement starts reading the index.
//
// Expected (docs/CACHING.md: tmp/ holds "bodies being written"; docs/CONFIGURATION.md
// --disk-cache: "bytes kept on disk"): the dead worker's half-written body does not stay in tmp/,
// outside --disk-cache, for the rest of the gateway's life.

import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { origin } from './disk-lib.ts';
import { pattern, sleep, startGateway } from './gateway-lib.ts';
import { killWorker, until } from './gwindex2-lib.ts';

afterAll(runTeardowns);

const SIZE = 64 * 1024 * 1024;
const CHUNK = pattern(1024 * 1024);

function tmpBytes(dir: string): number {
  const tmp = join(dir, 'v1', 'tmp');
  let n = 0;
  for (const f of readdirSync(tmp)) n += statSync(join(tmp, f), { throwIfNoEntry: false })?.size ?? 0;
  return n;
}

describe('a worker killed in the middle of a fill', () => {
  it('leaves no partial body in tmp/ once its replacement runs', async () => {
    const dir = await tempDir('gwi2-tmp-');
    // An origin that sends 8 MiB of a 64 MiB body and then stalls.
    const open = new Set<import('node:http').ServerResponse>();
    const port = await origin((_req, res) => {
      open.add(res);
      res.writeHead(200, { 'cache-control': 'max-age=3600', 'content-length': SIZE });
      for (let i = 0; i < 8; i++) res.write(CHUNK);
    });
    onTeardown(() => {
      for (const r of open) r.destroy();
    });
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${port}`, '--cache-dir', dir]);
    void fetch(`http://127.0.0.1:${gw.port}/big`).catch(() => undefined);
    expect(await until(() => tmpBytes(dir) >= 8 * 1024 * 1024, 15_000)).toBe(true);
    await killWorker(gw);
    await sleep(3000);
    expect(tmpBytes(dir)).toBe(0);
  }, 60_000);
});
