// Attack on docs/SEMANTICS.md "unlink" (a file put back after a failed rename over it: "its
// writers go on and their `close` publishes it"): the writer is a large new file whose stream has
// already sent parts (past the first 16 MiB) when the failed mv hides it.

import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { driver, setup, type Setup } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MiB = 1024 * 1024;

describe.skipIf(!fuse.ok || !minio.ok)('a failed mv over a large file being written', () => {
  let S: Setup;
  beforeAll(async () => {
    S = await setup('pb2-stream');
  }, 30_000);

  it('the writer goes on, and its close publishes the whole file', async () => {
    const cmd = driver();
    const t = join(S.dir, 't');
    const s = join(S.dir, 's');
    expect(await cmd(`put ${s} source`)).toBe('OK');
    expect(await cmd(`open w ${t} ${0o2 | 0o100 | 0o1000}`)).toBe('OK');
    expect(await cmd(`write w 65 ${40 * MiB} 0`)).toBe('OK');
    S.refuse(true);
    const mv = await cmd(`rename ${s} ${t}`);
    S.refuse(false);
    const out = [mv.startsWith('ERR'), await cmd(`write w 66 ${MiB} ${40 * MiB}`), await cmd('fstat w'), await cmd('close w')];
    await wait(2500);
    const want = createHash('sha256').update(Buffer.alloc(40 * MiB, 65)).update(Buffer.alloc(MiB, 66)).digest('hex');
    expect({ out, t: await S.bucket.sha('t'), mount: await cmd(`psha ${t}`), uploads: await S.bucket.uploads() }).toEqual({
      out: [true, 'OK', `OK ${41 * MiB} 644`, 'OK'],
      t: want,
      mount: `OK ${want}`,
      uploads: [],
    });
  }, 55_000);
});
