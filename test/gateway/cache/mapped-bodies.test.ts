// Bodies mapped from the page cache: lent while all in memory, the same mapping to answers that
// come together, let go on drop or when pushed out, and unmapped only after its last answer.

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readFileSync, symlinkSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAP_MAX, MappedBodies, TAIL } from '../../../gateway/cache/mapped-bodies.ts';
import { mappingUnavailable } from '../../../lib/mapped-file.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);

const yes = () => true;

async function file(bytes: Buffer): Promise<string> {
  const path = join(await tempDir('estuary-mapped-'), randomBytes(6).toString('hex'));
  writeFileSync(path, bytes);
  return path;
}

/** Drops a file's clean pages from the page cache (GNU dd: fadvise DONTNEED). */
function evictPages(path: string): void {
  const fd = openSync(path, 'r+');
  fsyncSync(fd);
  closeSync(fd);
  execFileSync('dd', [`if=${path}`, 'iflag=nocache', 'count=0', 'status=none']);
}

describe('MappedBodies', () => {
  it('is built here (npm ci builds lib/native)', () => {
    expect(mappingUnavailable).toBeUndefined();
  });

  it('lends a body in the page cache, mapped, and the same mapping to a second answer', async () => {
    const bytes = randomBytes(300_000);
    const path = await file(bytes);
    const m = new MappedBodies();
    const a = await m.lend(path, bytes.length, yes);
    if (!a || a === 'gone') throw new Error(`not lent: ${a}`);
    expect(a.body.equals(bytes.subarray(0, bytes.length - TAIL))).toBe(true);
    expect(a.tail.equals(bytes.subarray(bytes.length - TAIL))).toBe(true);
    const b = await m.lend(path, bytes.length, yes);
    if (!b || b === 'gone') throw new Error(`not lent: ${b}`);
    expect(b.body.buffer).toBe(a.body.buffer);
    expect(m.count).toBe(1);
    expect(m.bytes).toBe(bytes.length - TAIL);
    a.done();
    b.done();
  });

  it('unmaps a dropped body only after its last answer is done', async () => {
    const bytes = randomBytes(70_000);
    const path = await file(bytes);
    const m = new MappedBodies();
    const a = await m.lend(path, bytes.length, yes);
    const b = await m.lend(path, bytes.length, yes);
    if (!a || a === 'gone' || !b || b === 'gone') throw new Error('not lent');
    m.drop(path);
    // Still held for the answers writing from it, so still counted.
    expect(m.count).toBe(1);
    expect(m.bytes).toBe(bytes.length - TAIL);
    a.done();
    a.done(); // a second call is ignored: b still writes from it
    expect(b.body.length).toBe(bytes.length - TAIL);
    expect(b.body.equals(bytes.subarray(0, bytes.length - TAIL))).toBe(true);
    expect(m.bytes).toBe(bytes.length - TAIL);
    b.done();
    expect(b.body.length).toBe(0);
    expect(m.count).toBe(0);
    expect(m.bytes).toBe(0);
  });

  it('answers gone for a file cut short, also when it was mapped before, and undefined for what it does not map', async () => {
    const bytes = randomBytes(64 * 1024);
    const path = await file(bytes);
    const m = new MappedBodies();
    const a = await m.lend(path, bytes.length, yes);
    if (!a || a === 'gone') throw new Error('not lent');
    a.done();
    truncateSync(path, 10_000);
    const again = await m.lend(path, bytes.length, yes);
    // Never handed to expect() as is: formatting a mapping past its file's end would read it.
    expect(typeof again === 'object' ? 'lent' : again).toBe('gone');
    expect(m.count).toBe(0);
    expect(await m.lend(join(path, '..', 'absent'), 1000, yes)).toBe('gone');
    expect(await m.lend(path, TAIL, yes)).toBeUndefined();
    expect(await m.lend(path, MAP_MAX + 1, yes)).toBeUndefined();
  });

  it('does not lend a body whose pages left the page cache, and lets go of its mapping', async () => {
    const bytes = randomBytes(256 * 1024);
    const path = await file(bytes);
    const m = new MappedBodies();
    const a = await m.lend(path, bytes.length, yes);
    if (!a || a === 'gone') throw new Error('not lent');
    a.done();
    // Pages mapped by this process stay in the page cache while mapped: unmap first.
    m.drop(path);
    evictPages(path);
    expect(await m.lend(path, bytes.length, yes)).toBeUndefined();
    expect(m.count).toBe(0);
  });

  it('sees a cut inside the last page, which leaves that page in the page cache', async () => {
    const bytes = randomBytes(2 ** 20 + 1000);
    const path = await file(bytes);
    const m = new MappedBodies();
    const a = await m.lend(path, bytes.length, yes);
    if (!a || a === 'gone') throw new Error('not lent');
    expect(await a.intact()).toBe(true);
    truncateSync(path, bytes.length - 16);
    expect(await a.intact()).toBe(false);
    a.done();
    expect(await m.lend(path, bytes.length, yes)).toBe('gone');
    expect(m.count).toBe(0);
  });

  it('asks its own descriptor: a removed file is intact, one cut and then removed is not', async () => {
    const bytes = randomBytes(100_000);
    const path = await file(bytes);
    const m = new MappedBodies();
    const a = await m.lend(path, bytes.length, yes);
    if (!a || a === 'gone') throw new Error('not lent');
    unlinkSync(path);
    expect(await a.intact()).toBe(true);
    a.done();
    const other = randomBytes(100_000);
    writeFileSync(path, other);
    const b = await m.lend(path, other.length, yes);
    if (!b || b === 'gone') throw new Error('not lent');
    expect(b.tail.equals(other.subarray(other.length - TAIL))).toBe(true);
    truncateSync(path, other.length - 10);
    unlinkSync(path);
    expect(await b.intact()).toBe(false);
    b.done();
  });

  it('never opens a FIFO or follows a symbolic link put in place of an entry file', async () => {
    const dir = await tempDir('estuary-mapped-');
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const secret = join(dir, 'secret');
    writeFileSync(secret, randomBytes(10_000));
    const link = join(dir, 'link');
    symlinkSync(secret, link);
    const m = new MappedBodies();
    expect(await m.lend(fifo, 10_000, yes)).toBe('gone');
    expect(await m.lend(link, 10_000, yes)).toBe('gone');
  });

  it('maps anew a file rewritten in place (same inode and length), and not with its old last bytes', async () => {
    const bytes = randomBytes(100_000);
    const path = await file(bytes);
    const m = new MappedBodies();
    const a = await m.lend(path, bytes.length, yes);
    if (!a || a === 'gone') throw new Error('not lent');
    a.done();
    await new Promise((r) => setTimeout(r, 10));
    const other = randomBytes(100_000);
    writeFileSync(path, other);
    const b = await m.lend(path, other.length, yes);
    if (!b || b === 'gone') throw new Error('not lent');
    expect(b.tail.equals(other.subarray(other.length - TAIL))).toBe(true);
    expect(b.body.buffer).not.toBe(a.body.buffer);
    b.done();
  });

  it('does not keep a mapping whose entry left the index while it was made', async () => {
    const bytes = randomBytes(50_000);
    const path = await file(bytes);
    const m = new MappedBodies();
    const a = await m.lend(path, bytes.length, () => false);
    if (!a || a === 'gone') throw new Error('not lent');
    expect(m.count).toBe(1);
    expect(a.body.length).toBe(bytes.length - TAIL);
    const b = await m.lend(path, bytes.length, yes);
    if (!b || b === 'gone') throw new Error('not lent');
    // Mapped anew: the one made meanwhile was not kept.
    expect(b.body.buffer).not.toBe(a.body.buffer);
    a.done();
    expect(a.body.length).toBe(0);
    expect(m.count).toBe(1);
    b.done();
  });

  it('unmaps what it lets go at once, not at the next garbage collection', async () => {
    const dir = await tempDir('estuary-mapped-');
    const paths = Array.from({ length: 100 }, (_, i) => join(dir, `f${i}`));
    for (const p of paths) writeFileSync(p, randomBytes(8192));
    const maps = () => readFileSync('/proc/self/maps', 'utf8').split('\n').filter((l) => l.includes(dir)).length;
    const m = new MappedBodies();
    for (const p of paths) {
      const l = await m.lend(p, 8192, yes);
      if (!l || l === 'gone') throw new Error('not lent');
      l.done();
    }
    expect(maps()).toBe(100);
    for (const p of paths) m.drop(p);
    // The unmapping runs in the next turn of the event loop.
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(maps()).toBe(0);
  });

  it('keeps at most its number of mappings and bytes, letting go of the least recently used', async () => {
    const m = new MappedBodies(3 * 8192 - TAIL, 2);
    const paths = await Promise.all([1, 2, 3].map(() => file(randomBytes(8192))));
    const lend = async (p: string, size = 8192) => {
      const l = await m.lend(p, size, yes);
      if (!l || l === 'gone') throw new Error('not lent');
      return l;
    };
    const first = await lend(paths[0]!);
    const second = await lend(paths[1]!);
    // Both still written from: the third is read instead of mapped.
    expect(await m.lend(paths[2]!, 8192, yes)).toBeUndefined();
    expect(m.count).toBe(2);
    first.done();
    // The first, no longer written from, is let go for it.
    const third = await lend(paths[2]!);
    expect(first.body.length).toBe(0);
    expect(m.count).toBe(2);
    const big = await file(randomBytes(3 * 8192));
    expect(await m.lend(big, 3 * 8192, yes)).toBeUndefined();
    second.done();
    third.done();
    await lend(big, 3 * 8192);
    expect(m.count).toBe(1);
    expect(m.bytes).toBe(3 * 8192 - TAIL);
  });

  it('counts a mapping let go against its limits while an answer still writes from it', async () => {
    const m = new MappedBodies(2 * 8192, 2);
    const paths = await Promise.all([1, 2, 3].map(() => file(randomBytes(8192))));
    const a = await m.lend(paths[0]!, 8192, yes);
    if (!a || a === 'gone') throw new Error('not lent');
    m.drop(paths[0]!);
    expect(m.bytes).toBe(8192 - TAIL);
    const b = await m.lend(paths[1]!, 8192, yes);
    if (!b || b === 'gone') throw new Error('not lent');
    expect(await m.lend(paths[2]!, 8192, yes)).toBeUndefined();
    a.done();
    expect(m.bytes).toBe(8192 - TAIL);
    const c = await m.lend(paths[2]!, 8192, yes);
    if (!c || c === 'gone') throw new Error('not lent');
    b.done();
    c.done();
  });
});
