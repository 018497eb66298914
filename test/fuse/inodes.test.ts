// Inode numbers on a real mount: the same st_ino for every entry after the kernel dropped its
// caches (what tar, rsync -H, du and git's index rely on), kept across a rename, and distinct.

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../helpers/cleanup.ts';
import { startS3rver } from '../helpers/s3rver.ts';
import { fuseAvailable, mountBucket, sh } from './mount-helpers.ts';

afterAll(runTeardowns);

/** `inode path` of every entry under `dir`, the root included. */
async function inodes(dir: string): Promise<Map<string, string>> {
  const r = await sh(`cd '${dir}' && find . -exec stat -c '%i %n' {} +`);
  expect(r.code, r.out).toBe(0);
  return new Map(r.out.trim().split('\n').map((l) => [l.slice(l.indexOf(' ') + 1), l.slice(0, l.indexOf(' '))]));
}

describe.runIf(fuseAvailable().ok)('inode numbers', () => {
  it('stay the same across a kernel cache drop and a rename, and are distinct', async () => {
    const server = await startS3rver({ buckets: ['ino'] });
    const m = await mountBucket(server, 'ino');
    const made = await sh(
      `cd '${m.dir}' && mkdir -p a/b c && for f in x a/y a/b/z c/w; do echo "$f" > "$f"; done && ln -s x l && mkfifo p`,
    );
    expect(made.code, made.out).toBe(0);
    const before = await inodes(m.dir);
    expect(before.size).toBe(10);
    expect(new Set(before.values()).size).toBe(before.size);
    const dropped = await sh('sync && echo 2 > /proc/sys/vm/drop_caches');
    expect(dropped.code, dropped.out).toBe(0);
    expect(await inodes(m.dir)).toEqual(before);

    // A rename keeps the number, for a file and for a directory and what is in it.
    const moved = await sh(`cd '${m.dir}' && mv x x2 && mv a a2 && echo new > x && sync && echo 2 > /proc/sys/vm/drop_caches`);
    expect(moved.code, moved.out).toBe(0);
    const after = await inodes(m.dir);
    expect(after.get('./x2')).toBe(before.get('./x'));
    expect(after.get('./a2')).toBe(before.get('./a'));
    expect(after.get('./a2/b/z')).toBe(before.get('./a/b/z'));
    expect(new Set(after.values()).size).toBe(after.size);
  }, 60_000);
});
