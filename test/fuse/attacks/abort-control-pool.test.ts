// Aborts of uploads given up (docs/SEMANTICS.md, "Unfinished multipart uploads") run in the
// background on the control connections every HEAD, listing, DELETE and copy of the mount shares.
// Sixteen files removed while their parts streamed, on a store slow to answer aborts, must not
// hold up the mount's other operations: a cleanup nobody waits for takes at most a few of them.
//
// Through a real mount over MinIO behind a relay that answers aborts 20 s late (MinIO has carried
// them out): after 16 such removals, a `stat` of another file (--cache-ttl 0s) is timed.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { type MinioServer, minioAvailable } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { isAbort, relayedMinio, type Verdict } from './abort-harness.ts';
import { Bucket } from './hidden-harness.ts';
import { driver, O_RDWR_CREAT_TRUNC } from './rmopen-harness.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();
const minio = await minioAvailable();
const MiB = 1024 * 1024;
const REMOVED = 16;

describe.skipIf(!fuse.ok || !minio.ok)('aborts in the background on a store slow to answer them', () => {
  let server: MinioServer;
  let bucket: Bucket;
  let url: string;
  let decide: (method: string, query: URLSearchParams) => Verdict = () => 'pass';
  beforeAll(async () => {
    let relay;
    ({ server, bucket, relay } = await relayedMinio('abort-pool', (m, q) => decide(m, q)));
    url = relay.url;
    await bucket.put('other', Buffer.from('other'));
  }, 30_000);

  it(`${REMOVED} slow aborts do not hold up the mount's other operations`, async () => {
    const m = await mountBucket({ ...server, endpoint: url }, bucket.name, [
      '--cache-dir',
      await tempDir('abort-cache-'),
      '--cache-ttl',
      '0s',
    ]);
    const cmd = driver();
    for (let i = 0; i < REMOVED; i++) {
      expect(await cmd(`open w${i} ${join(m.dir, `job-${i}`)} ${O_RDWR_CREAT_TRUNC}`)).toBe('OK');
      expect(await cmd(`write w${i} 65 ${17 * MiB} 0`)).toBe('OK');
    }
    decide = (method, q) => (isAbort(method, q) ? { lateMs: 20_000 } : 'pass');
    const rmMs: number[] = [];
    for (let i = 0; i < REMOVED; i++) {
      const t = Date.now();
      expect((await sh(`rm '${join(m.dir, `job-${i}`)}'`, undefined, 40_000)).code).toBe(0);
      rmMs.push(Date.now() - t);
    }
    const t = Date.now();
    const st = await sh(`stat -c %s '${join(m.dir, 'other')}'`, undefined, 40_000);
    const statMs = Date.now() - t;
    decide = () => 'pass';
    for (let i = 0; i < REMOVED; i++) await cmd(`close w${i}`);
    const state = { rmMs, statMs, stat: st.out.trim() };
    expect(st.out.trim(), JSON.stringify(state)).toBe('5');
    expect(Math.max(...rmMs, statMs), JSON.stringify(state)).toBeLessThan(5000);
  }, 60_000);
});
