// A failed `mv s t` over a file held by a writer, whose close then fails too (docs/SEMANTICS.md,
// "unlink" and "rename": a close that fails leaves the old object where it was): t's object and
// name stay.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { ACCESS_DENIED } from './rmopen-harness.ts';
import { driver, ORIGINAL, setup, type Setup, sha } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!fuse.ok || !minio.ok)('a failed mv over a file with a writer, then a close that fails', () => {
  let S: Setup;
  let refusePut = false;
  beforeAll(async () => {
    S = await setup('pb2-closefail', [], (method, path, headers) =>
      refusePut && method === 'PUT' && headers['x-amz-copy-source'] === undefined && !path.includes('uploadId') ? { status: 403, body: ACCESS_DENIED } : 'pass',
    );
  }, 30_000);

  it('the old object stays (or comes back), and the name still reads it', async () => {
    const cmd = driver();
    const t = join(S.dir, 't');
    const s = join(S.dir, 's');
    expect(await cmd(`put ${t} ${ORIGINAL}`)).toBe('OK');
    expect(await cmd(`put ${s} source`)).toBe('OK');
    expect(await cmd(`open w ${t} ${0o2}`)).toBe('OK');
    expect(await cmd('write w 79 1 0')).toBe('OK');
    S.refuse(true);
    const mv = await cmd(`rename ${s} ${t}`);
    S.refuse(false);
    expect(mv).toMatch(/^ERR/);
    refusePut = true;
    const close = await cmd('close w');
    refusePut = false;
    await wait(2500);
    expect({ close: close.startsWith('ERR'), bucket: (await S.bucket.body('t'))?.toString(), mount: await cmd(`psha ${t}`) }).toEqual({
      close: true,
      bucket: ORIGINAL,
      mount: `OK ${sha(ORIGINAL)}`,
    });
  }, 40_000);

  it('control, no mv: the close fails and the old object stays', async () => {
    const cmd = driver();
    const t = join(S.dir, 'c');
    expect(await cmd(`put ${t} ${ORIGINAL}`)).toBe('OK');
    expect(await cmd(`open w ${t} ${0o2}`)).toBe('OK');
    expect(await cmd('write w 79 1 0')).toBe('OK');
    refusePut = true;
    const close = await cmd('close w');
    refusePut = false;
    await wait(500);
    expect({ close: close.startsWith('ERR'), bucket: (await S.bucket.body('c'))?.toString() }).toEqual({ close: true, bucket: ORIGINAL });
  }, 40_000);
});
