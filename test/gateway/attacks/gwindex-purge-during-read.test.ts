// Attack: an admin purge by prefix sent to a replacement worker while it reads its disk index.
// Expected (docs/CACHING.md, "A purge removes what is stored when it runs"): what the cache held
// under the prefix before the crash is stored, so the purge removes it; after the purge answers,
// no GET under that prefix is served a copy stored before the purge — also once the read ends.

import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { startGateway, sleep } from './gateway-lib.ts';
import { get, origin, workers } from './disk-lib.ts';

afterAll(runTeardowns);

const FILLER = 3000;
const TOKEN = 'gwindex-token-0123456789abcdef';

describe('purge during the replacement worker index read', () => {
  it('a purge answered during the read removes the stored entries for good', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gwindex-purge-'));
    onTeardown(() => rm(dir, { recursive: true, force: true }));
    let generation = 1;
    const up = await origin((req, res) => {
      res.writeHead(200, { 'cache-control': 'max-age=3600' }).end(`g${generation} ${req.url}`.padEnd(200, '.'));
    });
    const gw = await startGateway([
      '--upstream', `o=http://127.0.0.1:${up}`, '--cache-dir', dir, '--disk-cache', '1GiB',
      '--mem-object-max', '1', '--admin-token', TOKEN,
    ]);
    for (let i = 0; i < 10; i++) await get(gw.port, `/purged/${i}`);
    for (let i = 0; i < FILLER; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, j) => get(gw.port, `/keep/${i + j}`)));
    }
    expect((await get(gw.port, '/purged/3')).body.toString()).toMatch(/^g1 /);
    await sleep(500);
    generation = 2;
    process.kill(workers(gw.child.pid!)[0]!, 'SIGKILL');
    const answer = await new Promise<{ status: number; body: string }>((resolve) => {
      const tryOnce = async () => {
        const r = await fetch(`http://127.0.0.1:${gw.port}/estuary/v1/admin/purge`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ prefix: '/purged/' }),
        }).catch(() => undefined);
        if (r) resolve({ status: r.status, body: await r.text() });
        else setTimeout(tryOnce, 5);
      };
      void tryOnce();
    });
    expect(answer.status).toBe(200);
    await sleep(3000); // well past the read and INDEX_WAIT_MS
    const after = await Promise.all(Array.from({ length: 10 }, (_, i) => get(gw.port, `/purged/${i}`)));
    // every purged path is fetched anew (generation 2), none comes back from the index
    expect(after.map((r) => r.body.toString().slice(0, 3))).toEqual(Array(10).fill('g2 '));
    // and the purge counted what it removed: the ten entries stored before the crash
    expect(answer.body).toMatch(/10/);
  }, 60_000);
});
