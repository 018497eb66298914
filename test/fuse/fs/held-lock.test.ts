// fuse/fs/held-lock.ts: a lock held for weeks survives a tmp cleaner. Its file's times are
// refreshed, and a lock file removed anyway is locked again, so a start never finds the running
// mount's staging directory or journal unlocked; a start that finds the lock file removed while
// the PID file names a running holder is refused, and a holder whose path another process took
// is told.

import { mkdirSync, statSync, unlinkSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { holdLock } from '../../../fuse/fs/held-lock.ts';
import { DirLocked, lockDirSync } from '../../../lib/dir-lock.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { holdLock as holdElsewhere } from './lock-holder.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('holdLock', () => {
  it('keeps the lock file fresh for age-based cleaners', async () => {
    const dir = await tempDir('estuary-held-');
    const lock = holdLock(dir, 'x', { everyMs: 50 });
    const old = new Date(Date.now() - 30 * 86_400_000);
    utimesSync(join(dir, 'x.lock'), old, old);
    await sleep(200);
    expect(statSync(join(dir, 'x.lock')).mtimeMs).toBeGreaterThan(Date.now() - 60_000);
    lock.release();
  });

  it('locks the path again once its file was removed', async () => {
    const dir = await tempDir('estuary-held-');
    const lock = holdLock(dir, 'x', { everyMs: 50 });
    unlinkSync(join(dir, 'x.lock'));
    await sleep(200);
    expect(() => lockDirSync(dir, 'x')).toThrow(DirLocked);
    lock.release();
    lockDirSync(dir, 'x').release();
  });

  it('keeps the directory it guards fresh too', async () => {
    const dir = await tempDir('estuary-held-');
    mkdirSync(join(dir, 'x'));
    const lock = holdLock(dir, 'x', { everyMs: 50, guards: join(dir, 'x') });
    const old = new Date(Date.now() - 30 * 86_400_000);
    utimesSync(join(dir, 'x'), old, old);
    await sleep(200);
    expect(statSync(join(dir, 'x')).mtimeMs).toBeGreaterThan(Date.now() - 60_000);
    lock.release();
  });

  it('is refused while the PID file names a running holder of a removed lock file', async () => {
    const dir = await tempDir('estuary-held-');
    const other = await holdElsewhere(dir, 'x');
    unlinkSync(join(dir, 'x.lock'));
    expect(() => holdLock(dir, 'x')).toThrow(DirLocked);
    await other.stop('SIGKILL');
    holdLock(dir, 'x').release();
  });

  it('tells its holder when another taker locked the path after its file was removed', async () => {
    const dir = await tempDir('estuary-held-');
    const lost: unknown[] = [];
    const lock = holdLock(dir, 'x', { everyMs: 100, onLost: (err) => lost.push(err) });
    unlinkSync(join(dir, 'x.lock'));
    // SQLite keeps record locks apart between connections of one process too.
    const other = lockDirSync(dir, 'x');
    await sleep(400);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toBeInstanceOf(DirLocked);
    lock.release();
    other.release();
  });
});
