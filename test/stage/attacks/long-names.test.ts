// `stage in` promises to refuse only names longer than 255 bytes (NAME_MAX). A key whose last
// segment is 227–255 bytes is a legal Linux file name (and `stage out` uploads such files), but the
// partial file stage writes first (NAME.<12 hex>.estuary-partial, 29 bytes longer) is not: the
// download fails with ENAMETOOLONG, so a tree staged out cannot be staged back in.

import { afterAll, describe, expect, it } from 'vitest';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { startFakeS3 } from './stage-fake-s3.ts';
import { stage } from './stage-run.ts';

afterAll(runTeardowns);

describe('stage: names of 227 to 255 bytes', () => {
  it('stage in writes a key whose name is 240 bytes (a legal file name)', async () => {
    const name = 'n'.repeat(240);
    const s3 = await startFakeS3(new Map([[`p/${name}`, { body: Buffer.from('hello'), sha256: true }]]));
    const dir = join(await tempDir(), 'd');
    const r = await stage(['in', 's3://bkt/p/', dir, '--endpoint', s3.endpoint, '--state-dir', await tempDir()]);
    expect(r.summary?.failed).toEqual([]);
    expect(r.code).toBe(0);
    expect(await readFile(join(dir, name), 'utf8')).toBe('hello');
  });

  it('a file of a 255-byte name staged out comes back with stage in', async () => {
    const name = `${'é'.repeat(127)}x`; // 255 bytes of UTF-8
    const s3 = await startFakeS3();
    const src = await tempDir();
    await writeFile(join(src, name), 'round trip');
    const out = await stage(['out', src, 's3://bkt/p/', '--endpoint', s3.endpoint, '--state-dir', await tempDir()]);
    expect(out.code).toBe(0);
    const dir = join(await tempDir(), 'd');
    const back = await stage(['in', 's3://bkt/p/', dir, '--endpoint', s3.endpoint, '--state-dir', await tempDir()]);
    expect(back.summary?.failed).toEqual([]);
    expect(back.code).toBe(0);
    expect(await readFile(join(dir, name), 'utf8')).toBe('round trip');
  });
});
