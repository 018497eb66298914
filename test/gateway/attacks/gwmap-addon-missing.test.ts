// Regression (holds today): the mapping addon cannot be loaded (simulated: a preload's module hook
// makes `mapped_file.node` fail to resolve, in the primary and in both workers).
//
// Expected (docs/CACHING.md, "Disk hits from the page cache": "Where it could not be built, disk
// hits are read as above at more CPU per hit. The gateway says so at start (`disk hits are read
// into each worker instead of mapped`), at the top of its status page, and with
// `estuary_gateway_disk_mapping_unavailable` 1"): all three say so, nothing is mapped, and disk
// hits are byte-exact.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { get, metric, origin } from './disk-lib.ts';
import { freePort, pattern } from './gateway-lib.ts';

afterAll(runTeardowns);

const ESTUARY = join(import.meta.dirname, '..', '..', '..', 'bin', 'estuary.js');
const SIZE = 2 * 2 ** 20 + 77;

const HOOK = `import { registerHooks } from 'node:module';
registerHooks({
  resolve(specifier, context, next) {
    if (specifier.endsWith('mapped_file.node')) throw new Error('Cannot find module ' + specifier);
    return next(specifier, context);
  },
});
`;

describe('the mapping addon missing', () => {
  it('warns at start, on the status page and in the metric, and reads disk hits right', async () => {
    const body = pattern(SIZE, 17);
    const port = await origin((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'max-age=86400', 'content-length': SIZE });
      res.end(body);
    });
    const dir = await tempDir('gwmap-noaddon-');
    const hook = join(dir, 'no-addon.mjs');
    writeFileSync(hook, HOOK);
    const listen = await freePort();
    const child = startChild(NODE, ['--import', hook, ESTUARY, 'gateway', '--listen', `127.0.0.1:${listen}`, '--log-format', 'json',
      '--upstream', `o=http://127.0.0.1:${port}`, '--cache-dir', join(dir, 'cache'), '--workers', '2']);
    onTeardown(async () => {
      await child.stop();
    });
    await child.waitFor(/gateway listening/, 30_000);
    await child.waitFor(/disk hits are read into each worker instead of mapped/, 5000);
    for (let i = 0; i < 6; i++) {
      const r = await get(listen, '/obj');
      expect(r.status).toBe(200);
      expect(r.body.equals(body)).toBe(true);
    }
    expect(await metric(listen, 'estuary_gateway_disk_mapping_unavailable')).toBe(1);
    expect(await metric(listen, 'estuary_gateway_disk_mapped_bytes')).toBe(0);
    const status = await get(listen, '/estuary/v1/status');
    expect(status.body.toString()).toMatch(/Disk hits are read into each worker instead of mapped from the page cache/);
  }, 40_000);
});
