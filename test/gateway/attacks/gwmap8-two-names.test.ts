// Attack: two `--s3` names served from one store bucket (`--s3 kek-data=URL --s3 alias=URL/kek-data`).
// Objects are cached under the name served (s3://NAME/KEY), so a write through `alias` left what
// `kek-data` held of the same store object (whole and as blocks) served until revalidated: the old
// bytes after a PUT, the deleted bytes after a DELETE. Such a configuration is refused at start-up
// (exit 2, one line naming both), as the same name given twice is; one name for another store
// bucket (`data=URL/kek-data`) still serves.

import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { NODE } from '../../helpers/process.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct, send } from './s3-harness.ts';

afterAll(runTeardowns);

const BIN = new URL('../../../bin/estuary.js', import.meta.url).pathname;
const refusal = (...s3: string[]) => spawnSync(NODE, [BIN, 'gateway', ...s3.flatMap((x) => ['--s3', x]), '--s3-issuer-key-file', '/nonexistent'], { encoding: 'utf8', timeout: 30_000 });

describe('two --s3 names for one store bucket', () => {
  it('are refused at start-up with one line naming both', () => {
    for (const args of [
      ['kek-data=http://127.0.0.1:9', 'alias=http://127.0.0.1:9/kek-data'],
      ['kek-data=http://127.0.0.1:9,alias=http://127.0.0.1:9/kek-data/'],
      ['kek-data=http://127.0.0.1:9', 'kek-data=http://127.0.0.1:10'],
    ]) {
      const r = refusal(...args);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/both serve bucket kek-data of http:\/\/127\.0\.0\.1:9; serve each store bucket under one name|named twice/);
    }
  });

  it('one name for a store bucket of another name still serves it', async () => {
    const store = await startS3rver({ buckets: [BUCKET, 'other-data'] });
    expect((await direct(store, 'PUT', '/other-data/run42/x', 'through another name')).status).toBe(200);
    const g = await startS3Gw(store, ['--s3', `alias=${store.endpoint}/other-data`]);
    const cred = await g.issue('alias/run42/');
    const r = await send(g.gw, cred, 'GET', '/alias/run42/x');
    expect([r.status, r.body]).toEqual([200, 'through another name']);
  }, 60_000);
});
