// Collision bookkeeping is quadratic in the number of keys that map to one local path: every new
// alias is checked with `keys.includes(key)` against all earlier ones and appended. A store can
// list any number of distinct keys for one path (`f`, `/f`, `./f`, `//f`, `/./f`, … every mix of
// empty and `.` segments). Measured: 20,000 aliases 1.5 s, 60,000 10 s, 120,000 48 s of CPU
// before the run ends; the default --max-objects (1,000,000) allows about an hour. Each alias is
// also kept in the summary (see stage-listing-memory.test.ts). Expected: a listing
// of 150,000 keys handled in seconds (about 10 s on a loaded 2-core machine), aliases or not.

import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { listXml, startFakeS3 } from './stage-fake-s3.ts';
import { stageChild } from './stage-run.ts';

afterAll(runTeardowns);

/** A distinct key for every i that maps to the local path `f`: its binary digits as `./` and `/`. */
const alias = (i: number) => `p/${i.toString(2).split('').map((d) => (d === '1' ? './' : '/')).join('')}f`;

describe('stage in: many keys that map to one path', () => {
  it('a listing of 150,000 aliases of one file ends within 25 s', async () => {
    const n = 150_000;
    const s3 = await startFakeS3(new Map([['p/f', { body: Buffer.from('f'), sha256: true }]]));
    s3.hook = (req, res) => {
      if (req.url.searchParams.get('list-type') !== '2') return false;
      const page = Number(req.url.searchParams.get('continuation-token') ?? '0');
      const keys = Array.from({ length: 1000 }, (_, i) => alias(page * 1000 + i + 1));
      const next = (page + 1) * 1000 < n ? String(page + 1) : undefined;
      res.writeHead(200, { 'content-type': 'application/xml' }).end(listXml(keys.map((k) => ({ key: k, size: 1, etag: '"x"' })), next));
      return true;
    };
    const child = stageChild(['in', 's3://bkt/p/', join(await tempDir(), 'd'), '--endpoint', s3.endpoint, '--state-dir', await tempDir(), '--log-level', 'error']);
    const code = await Promise.race([child.exited, new Promise<string>((r) => setTimeout(() => r('still running'), 25_000))]);
    await child.stop('SIGKILL');
    expect(code).toBe(1); // the collisions are refused: exit 1, ESTUARY_STAGE_COLLISION
  }, 40_000);
});
