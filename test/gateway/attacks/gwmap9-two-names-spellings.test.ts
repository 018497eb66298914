// Attack: the gateway refuses two --s3 names for one store bucket at start-up (exit 2), because
// objects are cached under the name served and a write through one name would leave the other
// name's copies served (docs/STAGING.md). Spellings of one store URL: trailing slash, default
// ports, upper case, IPv4 and IPv6 shorthands, and host names that name the same address
// (`localhost` against `127.0.0.1`, a trailing dot).
// Expected: each pair naming the same store bucket is refused with exit 2 before serving.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { freePort } from './gateway-lib.ts';

afterAll(runTeardowns);

const BIN = join(import.meta.dirname, '..', '..', '..', 'bin', 'estuary.js');

describe('two --s3 names for one store bucket', () => {
  it('are refused at start-up however the store URL is spelled', async () => {
    const dir = await tempDir('estuary-atk-map9-');
    const keys = join(dir, 'keys.json');
    await writeFile(keys, JSON.stringify({ default: { accessKeyId: 'K', secretAccessKey: 'S', region: 'us-east-1' } }), { mode: 0o600 });
    await writeFile(join(dir, 'issuer.key'), 'k'.repeat(64), { mode: 0o600 });
    const p = await freePort();
    const pairs: [string, string][] = [
      [`http://127.0.0.1:${p}/`, `http://127.0.0.1:${p}/kek-data/`],
      [`HTTP://LOCALHOST:${p}`, `http://localhost:${p}/kek-data`],
      ['http://127.0.0.1:80', 'http://127.0.0.1/kek-data'],
      ['https://127.0.0.1:443', 'https://127.0.0.1/kek-data'],
      [`http://127.1:${p}`, `http://127.0.0.1:${p}/kek-data`],
      [`http://[::1]:${p}`, `http://[0:0::1]:${p}/kek-data`],
      // The same address by name and by number, and a fully qualified name.
      [`http://localhost:${p}`, `http://127.0.0.1:${p}/kek-data`],
      [`http://localhost.:${p}`, `http://localhost:${p}/kek-data`],
    ];
    const bad: string[] = [];
    for (const [a, b] of pairs) {
      const c = startChild(NODE, [
        BIN, 'gateway', '--listen', `127.0.0.1:${await freePort()}`, '--cache-dir', join(dir, 'cache'), '--log-format', 'json',
        '--s3', `kek-data=${a}`, '--s3', `alias=${b}`, '--s3-credentials', keys, '--s3-issuer-key-file', join(dir, 'issuer.key'),
      ]);
      const code = await Promise.race([c.exited, c.waitFor(/gateway listening/, 20_000).then(() => 'listening' as const, () => 'timeout' as const)]);
      if (code !== 2) bad.push(`kek-data=${a} and alias=${b}: ${code === 'listening' ? 'started serving' : `exit ${String(code)}`}`);
      if (code === 'listening' || code === 'timeout') await c.stop();
    }
    expect(bad, bad.join('\n')).toEqual([]);
  }, 120_000);
});
