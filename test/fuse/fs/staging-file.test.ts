// fuse/fs/staging-file.ts: the staging directory of a mount that runs for weeks, removed by an
// age-based tmp cleaner while empty (with the cache directory above it, or alone), is made again at
// the next change; one that reappears as a symlink is not followed.

import { mkdir, readdir, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BufferPool } from '../../../fuse/fs/buffer-pool.ts';
import { MemoryBudget } from '../../../fuse/fs/memory-budget.ts';
import { StagingFile, type StagingSettings } from '../../../fuse/fs/staging-file.ts';
import { MemoryObjectClient } from '../../../fuse/s3/memory-client.ts';
import { tempDir } from '../../helpers/tmp.ts';

const settings = (dir: string): StagingSettings => ({
  client: new MemoryObjectClient(),
  pool: new BufferPool(new MemoryBudget(16 * 2 ** 20)),
  dir,
  limit: 2 ** 20,
  firstPartSize: 5 * 2 ** 20,
  maxInFlight: 2,
});

describe('StagingFile', () => {
  it('makes its directory again after a cleaner removed it, and the cache directory with it', async () => {
    const base = await tempDir('estuary-staging-');
    const dir = join(base, 'cache', 'staging-1-0123abcd');
    for (const gone of [dir, join(base, 'cache')]) {
      await rm(gone, { recursive: true, force: true });
      const file = await StagingFile.create(settings(dir), Buffer.from('more'));
      expect((await file.read(0, 10)).toString()).toBe('more');
      expect(await readdir(dir)).toHaveLength(1);
      await file.close();
    }
  });

  it('refuses a staging directory that reappeared as a symlink', async () => {
    const base = await tempDir('estuary-staging-');
    const elsewhere = join(base, 'elsewhere');
    await mkdir(elsewhere);
    const dir = join(base, 'staging-1-0123abcd');
    await symlink(elsewhere, dir);
    await expect(StagingFile.create(settings(dir))).rejects.toThrow();
    expect(await readdir(elsewhere)).toEqual([]);
  });
});
