// fuse/cache-dir.ts's makeCacheDir: --cache-dir and its missing parents are made, private to the
// user, and a path that cannot be made is refused in one line (ESTUARY_FS_CACHE_DIR) at once, also
// where mkdir answers ENOENT under a parent that exists (/proc), on which Node's recursive mkdir
// spins for ever.

import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeCacheDir } from '../../fuse/cache-dir.ts';
import { tempDir } from '../helpers/tmp.ts';

describe('makeCacheDir', () => {
  it('makes the directory and its missing parents, mode 0700, and takes one that exists', async () => {
    const base = await tempDir('estuary-cache-dir-');
    const dir = join(base, 'a', 'b', 'c');
    await makeCacheDir(dir);
    for (const d of [join(base, 'a'), join(base, 'a', 'b'), dir]) expect((await stat(d)).mode & 0o777).toBe(0o700);
    await makeCacheDir(dir);
  });

  it('refuses a path under a file, and one where mkdir answers ENOENT, in one line', async () => {
    const base = await tempDir('estuary-cache-dir-');
    await writeFile(join(base, 'file'), '');
    await expect(makeCacheDir(join(base, 'file', 'x'))).rejects.toMatchObject({
      code: 'ESTUARY_FS_CACHE_DIR',
      message: expect.stringMatching(/file is not a directory; give a writable directory with --cache-dir$/),
    });
    const started = Date.now();
    await expect(makeCacheDir('/proc/estuary-test/cache')).rejects.toMatchObject({
      code: 'ESTUARY_FS_CACHE_DIR',
      message: expect.stringContaining('/proc/estuary-test cannot be made there'),
    });
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
