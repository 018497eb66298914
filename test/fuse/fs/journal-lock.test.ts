// The write-back journal's lock (fuse/fs/held-lock.ts) from the mount's side: a mount whose lock
// another process took after its file was removed stops acting as the journal's owner, and a
// file closed after that is refused with EIO rather than acknowledged into a journal whose new
// owner may delete it (docs/SEMANTICS.md, "One mount per journal").

import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryObjectClient } from '../../../fuse/s3/memory-client.ts';
import { lockDirSync } from '../../../lib/dir-lock.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { makeFs, quietLog, writeFile } from './make-fs.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('a write-back journal whose lock another process took', () => {
  it('stops, says so, and fails the next close with EIO', async () => {
    // Only the lock's check is driven by hand; everything else runs on real time.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const cacheDir = await tempDir('estuary-journal-lock-');
    const errors: string[] = [];
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem, { writeBack: true, cacheDir, log: { ...quietLog, error: (_o, msg) => errors.push(msg) } });
    await writeFile(fs, '/before', Buffer.from('kept'));
    await fs.journalSettled();
    unlinkSync(join(cacheDir, 'journal', 'lock.lock'));
    // SQLite keeps record locks apart between connections of one process, as between processes.
    const other = lockDirSync(join(cacheDir, 'journal'), 'lock');
    vi.advanceTimersByTime(60_000);
    expect(errors).toContain('lost the write-back journal lock; closes now fail with EIO');
    // An unmount then stops at its deadline instead of waiting for uploads that no longer run.
    expect(fs.journal!.failing).toBe(true);
    await expect(writeFile(fs, '/after', Buffer.from('not acknowledged'))).rejects.toMatchObject({ errno: 'EIO' });
    expect(mem.objects.get('before')?.body.toString()).toBe('kept');
    expect(mem.objects.has('after')).toBe(false);
    other.release();
    await fs.journal!.close();
    await fs.stop();
  });
});
