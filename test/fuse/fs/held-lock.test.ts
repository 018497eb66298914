// fuse/fs/held-lock.ts: a lock held for weeks survives a tmp cleaner. Its file's times are
// refreshed, and a lock file removed anyway is locked again, so a start never finds the running
// mount's staging directory or journal unlocked.

import { statSync, unlinkSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { holdLock } from '../../../fuse/fs/held-lock.ts';
import { DirLocked, lockDirSync } from '../../../lib/dir-lock.ts';
import { tempDir } from '../../helpers/tmp.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('holdLock', () => {
  it('keeps the lock file fresh for age-based cleaners', async () => {
    const dir = await tempDir('estuary-held-');
    const lock = holdLock(dir, 'x', 50);
    const old = new Date(Date.now() - 30 * 86_400_000);
    utimesSync(join(dir, 'x.lock'), old, old);
    await sleep(200);
    expect(statSync(join(dir, 'x.lock')).mtimeMs).toBeGreaterThan(Date.now() - 60_000);
    lock.release();
  });

  it('locks the path again once its file was removed', async () => {
    const dir = await tempDir('estuary-held-');
    const lock = holdLock(dir, 'x', 50);
    unlinkSync(join(dir, 'x.lock'));
    await sleep(200);
    expect(() => lockDirSync(dir, 'x')).toThrow(DirLocked);
    lock.release();
    lockDirSync(dir, 'x').release();
  });
});
