// One gateway per cache directory (docs/CACHING.md): a second one would empty tmp/ and cut the
// first one's fills. The lock is a record lock on <cache-dir>/gateway.lock; once that file is
// unlinked (a tmp cleaner, an operator removing a "stale lock"), a second gateway starts on the
// same directory and cuts the running gateway's fill.

import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE, startChild } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { freePort, pattern, rawOrigin, rawRequest, sleep, startGateway } from './gateway-lib.ts';

const N = 100_000;

describe('the cache directory lock after gateway.lock is unlinked', () => {
  it('a second gateway on the directory is refused and the first one\'s fill ends whole', async () => {
    const body = pattern(N, 9);
    const origin = await rawOrigin((s) => {
      s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${N}\r\nCache-Control: max-age=600\r\n\r\n`);
      let off = 0;
      const t = setInterval(() => {
        if (s.destroyed || off >= N) return clearInterval(t);
        s.write(body.subarray(off, off + 10_000));
        off += 10_000;
      }, 200);
    });
    const dir = await tempDir('atk-gw-');
    const first = await startGateway(['--allow-dest', '@loopback', '--cache-dir', dir]);
    await rm(join(dir, 'gateway.lock'));
    const url = `http://127.0.0.1:${origin}/obj`;
    const reply = rawRequest(first.port, `GET ${url} HTTP/1.1\r\nHost: 127.0.0.1:${origin}\r\nConnection: close\r\n\r\n`);
    await sleep(500);
    const second = startChild(NODE, [
      join(import.meta.dirname, '..', '..', '..', 'bin', 'estuary.js'), 'gateway', '--listen', `127.0.0.1:${await freePort()}`,
      '--allow-dest', '@loopback', '--cache-dir', dir, '--log-format', 'json',
    ]);
    const code = await Promise.race([second.exited, sleep(8000).then(() => 'still running')]);
    const r = await reply;
    expect(r.body.length).toBe(N);
    expect(r.body.equals(body)).toBe(true);
    expect(code, second.output()).toBe(2);
    // the first gateway notices and takes the path again, so the next start is refused on it too
    await first.child.waitFor(/lock file was removed/, 10_000);
    expect(existsSync(join(dir, 'gateway.lock'))).toBe(true);
  });
});
