// Attack: with --workers 2, the surviving worker stores an object while the replacement reads its
// index; the replacement's scan finds the new file before the primary's relay of that store (the
// 'put' message) reaches it — the primary holds messages for a worker that is slow to read them
// (docs/CACHING.md: "a worker more than 1 MiB behind reading what the primary sends it"). The
// relay then adopts, as a new object, the very file the scan already indexed.
//
// Expected: adopting an entry the index already holds at the same path changes nothing on disk.
// Today DiskStore.#put compares entry objects, not paths: the relayed copy replaces the scanned
// one, lru-cache disposes the "old" value, and dispose unlinks its path — the live file both
// workers index. Both then miss on it (the entry is lost), and the bytes are still counted.
//
// This drives two DiskStores on one directory (the two workers) to make the order exact; the
// message timing it stands for needs a primary backlog to reproduce with processes.

import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { DiskStore } from '../../../gateway/cache/disk-store.ts';
import type { EntryMeta } from '../../../gateway/cache/entry.ts';
import { createLogger } from '../../../lib/log.ts';
import { sleep } from './gateway-lib.ts';

afterAll(runTeardowns);

const log = createLogger({ level: 'silent', format: 'json', role: 'test' });

describe('a stored object relayed to a replacement after its scan indexed the file', () => {
  it('keeps the file', async () => {
    const dir = await tempDir('gwi2-adopt-');
    const survivor = new DiskStore(dir, 1 << 30, log);
    await survivor.open();
    const replacement = new DiskStore(dir, 1 << 30, log);
    await replacement.prepare(false);

    const body = Buffer.from('the only copy of this object');
    const now = Date.now();
    const meta: EntryMeta = {
      key: 'reverse://o/obj',
      url: 'reverse://o/obj',
      status: 200,
      headers: { 'content-length': String(body.length), 'cache-control': 'max-age=3600' },
      requestTime: now,
      responseTime: now,
      size: body.length,
    };
    const temp = await survivor.createTemp();
    await temp.fh.write(body, 0, body.length, 0);
    const stored = await survivor.commit(temp, meta);

    // The replacement's read finds the new file…
    await replacement.load();
    expect(replacement.peek(meta.key)?.path).toBe(stored.path);
    // …and then the primary's relay of the store arrives (a structured-clone copy, as over IPC).
    replacement.adopt(structuredClone({ meta: stored.meta, path: stored.path }));
    await sleep(200);

    expect(existsSync(stored.path)).toBe(true);
    expect(replacement.peek(meta.key)?.path).toBe(stored.path);
  });
});
