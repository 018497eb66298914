// A failed `mv s t` over a file above --staging-limit (100k here, for the default 16 GiB) held by
// a writer that has not written: the file is still there after the writer's close.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { driver, setup, type Setup } from './undone-harness.ts';
import { sha256 } from './hidden-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!fuse.ok || !minio.ok)('a failed mv over a writer\'s file above --staging-limit', () => {
  let S: Setup;
  beforeAll(async () => {
    S = await setup('pb2-stagingw', ['--staging-limit', '100k']);
  }, 30_000);

  it('the file is still there after the writer\'s close', async () => {
    const body = Buffer.alloc(300_000, 67);
    await S.bucket.put('t', body);
    const cmd = driver();
    const t = join(S.dir, 't');
    const s = join(S.dir, 's');
    expect(await cmd(`put ${s} source`)).toBe('OK');
    expect(await cmd(`open w ${t} ${0o2}`)).toBe('OK');
    S.refuse(true);
    const mv = await cmd(`rename ${s} ${t}`);
    S.refuse(false);
    const close = await cmd('close w');
    await wait(2500);
    expect({ mv: mv.startsWith('ERR'), close, t: await S.bucket.sha('t'), mount: await cmd(`stat ${t}`) }).toEqual({
      mv: true,
      close: 'OK',
      t: sha256(body),
      mount: 'OK 300000 644',
    });
  }, 40_000);
});
