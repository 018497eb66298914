// A failed `mv s t` over a file another client replaced after the mount's reader opened it: the
// bucket keeps the other client's version, and the reader never reads a version nobody wrote
// (the other client's bytes cut to the old size); it keeps what it read or fails as a reader of
// a replaced object does.
// Each case runs on a default mount and on one with --write-back.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { driver, ORIGINAL, setup, type Setup, sha } from './undone-harness.ts';

afterAll(runTeardowns);
const fuse = fuseAvailable();
const minio = await minioAvailable();
const NEWER = 'NEWER-VERSION-FROM-ANOTHER-CLIENT';

const MOUNT_MODES: readonly [string, readonly string[]][] = [['default', []], ['--write-back', ['--write-back']]];

describe.skipIf(!fuse.ok || !minio.ok).each(MOUNT_MODES)('a failed mv over a file another client replaced (%s)', (mode, flags) => {
  let S: Setup;
  beforeAll(async () => {
    S = await setup(`pb2-other-${mode === 'default' ? 'd' : 'wb'}`, flags);
  }, 30_000);

  it('the bucket keeps the other client\'s version, and the reader reads no version nobody wrote', async () => {
    const cmd = driver();
    const t = join(S.dir, 't');
    const s = join(S.dir, 's');
    expect(await cmd(`put ${t} ${ORIGINAL}`)).toBe('OK');
    expect(await cmd(`put ${s} source`)).toBe('OK');
    expect(await cmd(`open r ${t} 0`)).toBe('OK');
    expect(await cmd('sha r')).toBe(`OK ${sha(ORIGINAL)}`);
    await S.bucket.put('t', Buffer.from(NEWER));
    S.refuse(true);
    const mv = await cmd(`rename ${s} ${t}`);
    S.refuse(false);
    expect(mv).toMatch(/^ERR/);
    const out = [await cmd('sha r'), await cmd('close r')];
    // The reader keeps what it read, or fails as any reader of a replaced object does; it never
    // reads a version nobody wrote (the other client's bytes cut to the old size).
    const cut = `OK ${sha(NEWER.slice(0, ORIGINAL.length))}`;
    expect({ out, bucket: (await S.bucket.body('t'))?.toString() }).toEqual({
      out: [expect.not.stringMatching(new RegExp(`^${cut}$`)), 'OK'],
      bucket: NEWER,
    });
    expect(out[0]).toMatch(new RegExp(`^(OK ${sha(ORIGINAL)}|ERR .*)$`));
  }, 40_000);
});
