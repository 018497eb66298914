// Attack on docs/SEMANTICS.md "unlink" (a file put back after a failed rename over it): chains
// after the put-back of a file held by a writer or a reader: removed, renamed over, renamed away
// and back, its directory renamed, and what a listing and the bucket show meanwhile.

import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { driver, failedMvOverReader, ORIGINAL, setup, type Setup, sha } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
const W_CREAT_TRUNC = 0o2 | 0o100 | 0o1000;

describe.skipIf(!fuse.ok || !minio.ok)('chains after a put-back', () => {
  let S: Setup;
  beforeAll(async () => {
    S = await setup('pb2-writer');
  }, 30_000);

  async function failedMvOverWriter(dir: string, name: string) {
    const cmd = driver();
    const t = join(dir, name);
    const s = join(dir, `${name}-src`);
    expect(await cmd(`open w ${t} ${W_CREAT_TRUNC}`)).toBe('OK');
    expect(await cmd('write w 65 1000 0')).toBe('OK');
    expect(await cmd(`put ${s} source`)).toBe('OK');
    S.refuse(true);
    const mv = await cmd(`rename ${s} ${t}`);
    S.refuse(false);
    expect(mv).toMatch(/^ERR/);
    return { cmd, t, s };
  }

  it('writer: failed mv, rm t, more writes, close: nothing is published', async () => {
    const { cmd, t } = await failedMvOverWriter(S.dir, 'a');
    const out = [await cmd(`unlink ${t}`), await cmd('write w 66 10 1000'), await cmd('fstat w'), await cmd(`stat ${t}`), await cmd('close w')];
    await wait(2500);
    expect({ out, after: await cmd(`stat ${t}`), bucket: (await S.bucket.keys()).filter((k) => k === 'a' || k.includes('fuse_hidden')) }).toEqual({
      out: ['OK', 'OK', 'OK 1010 644', 'ERR No such file or directory', 'OK'],
      after: 'ERR No such file or directory',
      bucket: [],
    });
  }, 40_000);

  it('writer: failed mv, then a mv x t that succeeds: t is x, the writer\'s close publishes nothing', async () => {
    const { cmd, t } = await failedMvOverWriter(S.dir, 'b');
    const x = join(S.dir, 'b-x');
    expect(await cmd(`put ${x} from-x`)).toBe('OK');
    const out = [await cmd(`rename ${x} ${t}`), await cmd('write w 66 10 1000'), await cmd('fstat w'), await cmd(`cat ${t}`), await cmd('close w')];
    await wait(2500);
    expect({ out, after: await cmd(`cat ${t}`), t: (await S.bucket.body('b'))?.toString(), hidden: (await S.bucket.keys()).filter((k) => k.includes('fuse_hidden')) }).toEqual({
      out: ['OK', 'OK', 'OK 1010 644', 'OK from-x', 'OK'],
      after: 'OK from-x',
      t: 'from-x',
      hidden: [],
    });
  }, 40_000);

  it('writer: failed mv in dd, then mv dd ee with the writer open: its close publishes ee/f', async () => {
    const cmd0 = driver();
    expect(await cmd0(`mkdir ${join(S.dir, 'dd')}`)).toBe('OK');
    const { cmd } = await failedMvOverWriter(join(S.dir, 'dd'), 'f');
    const out = [await cmd(`rename ${join(S.dir, 'dd')} ${join(S.dir, 'ee')}`), await cmd(`stat ${join(S.dir, 'ee', 'f')}`), await cmd('write w 66 10 1000'), await cmd('fstat w'), await cmd('close w')];
    await wait(2500);
    const keys = await S.bucket.keys();
    expect({ out, ls: (await readdir(join(S.dir, 'ee'))).sort(), keys: keys.filter((k) => k.startsWith('dd') || k.startsWith('ee')).sort(), size: (await S.bucket.body('ee/f'))?.length }).toEqual({
      out: ['OK', 'OK 1000 644', 'OK', 'OK 1010 644', 'OK'],
      ls: ['f', 'f-src'],
      keys: ['ee/', 'ee/f', 'ee/f-src'],
      size: 1010,
    });
  }, 40_000);

  it('reader: failed mv, mv t u, rm u: the reader keeps its bytes, u and t are gone', async () => {
    const { cmd, t } = await failedMvOverReader(S, S.dir, 'c', expect);
    const u = join(S.dir, 'c-u');
    const out = [await cmd(`rename ${t} ${u}`), await cmd(`unlink ${u}`), await cmd('sha r'), await cmd('fstat r'), await cmd(`stat ${u}`), await cmd(`stat ${t}`), await cmd('close r')];
    await wait(2500);
    const keys = await S.bucket.keys();
    expect({ out, keys: keys.filter((k) => k === 'c' || k === 'c-u' || k.includes('fuse_hidden')), ls: (await readdir(S.dir)).filter((n) => n.startsWith('c') || n.includes('fuse_hidden')).sort() }).toEqual({
      out: ['OK', 'OK', `OK ${sha(ORIGINAL)}`, `OK ${ORIGINAL.length} 644`, 'ERR No such file or directory', 'ERR No such file or directory', 'OK'],
      keys: [],
      ls: ['c-src'],
    });
  }, 40_000);

  it('reader: failed mv, mv t u, mv u t: t is the file, the reader fstats, and t stays after the close', async () => {
    const { cmd, t } = await failedMvOverReader(S, S.dir, 'e', expect);
    const u = join(S.dir, 'e-u');
    const out = [await cmd(`rename ${t} ${u}`), await cmd(`rename ${u} ${t}`), await cmd(`stat ${t}`), await cmd(`psha ${t}`), await cmd('fstat r'), await cmd(`stat ${u}`), await cmd('close r')];
    await wait(2500);
    expect({ out, after: await cmd(`psha ${t}`), t: (await S.bucket.body('e'))?.toString(), u: await S.bucket.body('e-u') }).toEqual({
      out: ['OK', 'OK', `OK ${ORIGINAL.length} 644`, `OK ${sha(ORIGINAL)}`, `OK ${ORIGINAL.length} 644`, 'ERR No such file or directory', 'OK'],
      after: `OK ${sha(ORIGINAL)}`,
      t: ORIGINAL,
      u: undefined,
    });
  }, 40_000);

  it('a listing never shows a hidden name, while the reader is open or after', async () => {
    const { cmd } = await failedMvOverReader(S, S.dir, 'g', expect);
    const during = (await readdir(S.dir)).filter((n) => n.startsWith('g') || n.includes('fuse_hidden')).sort();
    expect(await cmd('close r')).toBe('OK');
    await wait(300);
    const after = (await readdir(S.dir)).filter((n) => n.startsWith('g') || n.includes('fuse_hidden')).sort();
    expect({ during, after, keys: (await S.bucket.keys()).filter((k) => k.includes('fuse_hidden')) }).toEqual({ during: ['g', 'g-src'], after: ['g', 'g-src'], keys: [] });
  }, 40_000);
});
