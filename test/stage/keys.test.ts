// Which keys `stage in` may write and where (stage/keys.ts), and the bounded queue between the
// listing and the copies (stage/queue.ts): pure, no I/O.

import { describe, expect, it } from 'vitest';
import { describeCollisions, localRel, MAX_COLLISION_KEYS, PathClaims } from '../../stage/keys.ts';
import { contentMd5 } from '../../stage/plan.ts';
import { printable } from '../../stage/progress.ts';
import { BoundedQueue } from '../../stage/queue.ts';

describe('localRel', () => {
  it('drops empty and dot segments, so different keys can name one path', () => {
    expect(localRel('d//f')).toEqual({ path: 'd/f' });
    expect(localRel('e/./g')).toEqual({ path: 'e/g' });
    expect(localRel('/abs')).toEqual({ path: 'abs' });
    expect(localRel('a/b/')).toEqual({ path: 'a/b' });
  });

  it('refuses keys that climb out, hold a NUL, name nothing or look like a partial file', () => {
    for (const k of ['..', '../../x', 'a/../b', 'a/..']) expect(localRel(k)).toEqual({ refused: 'it climbs out of the destination (..)' });
    expect(localRel('a\0b')).toEqual({ refused: 'it contains a NUL byte' });
    expect(localRel('./')).toEqual({ refused: 'it names no file' });
    expect('refused' in localRel('x/f.estuary-partial')).toBe(true);
    expect('refused' in localRel('x'.repeat(256))).toBe(true);
    expect(localRel('x'.repeat(255))).toEqual({ path: 'x'.repeat(255) });
  });
});

describe('PathClaims', () => {
  it('lets the first key of a path through and refuses later ones; a repeated key is no collision', () => {
    const c = new PathClaims(false);
    expect(c.claim('p/d//f', 'd/f')).toBe('first');
    expect(c.claim('p/d/f', 'd/f')).toBe('collision');
    expect(c.claim('p/d//f', 'd/f')).toBe('repeat');
    expect(c.claim('p/./d/f', 'd/f')).toBe('collision');
    expect(c.claim('p/F', 'F')).toBe('first');
    expect(c.claim('p/f', 'f')).toBe('first');
    expect(c.collisions()).toEqual([{ path: 'd/f', keys: ['p/d//f', 'p/d/f', 'p/./d/f'], more: 0 }]);
    expect(describeCollisions(c.collisions())).toBe('"p/d//f", "p/d/f", "p/./d/f" → d/f');
  });

  it('folds case on a case-insensitive destination', () => {
    const c = new PathClaims(true);
    expect(c.claim('p/F', 'F')).toBe('first');
    expect(c.claim('p/f', 'f')).toBe('collision');
    expect(c.claim('p/Dir/x', 'Dir/x')).toBe('first');
    expect(c.claim('p/dir/X', 'dir/X')).toBe('collision');
    expect(c.collisions().map((x) => x.path)).toEqual(['F', 'Dir/x']);
  });

  it('names at most five groups in one line', () => {
    const c = new PathClaims(false);
    for (let i = 0; i < 7; i++) {
      c.claim(`a${i}`, `${i}`);
      c.claim(`b${i}`, `${i}`);
    }
    expect(describeCollisions(c.collisions())).toMatch(/; and 2 more$/);
  });
});

describe('BoundedQueue', () => {
  it('makes the producer wait while full, and drains before it ends', async () => {
    const q = new BoundedQueue<number>(2);
    let put = 0;
    const producer = (async () => {
      for (let i = 1; i <= 5; i++) {
        await q.put(i);
        put = i;
      }
      q.close();
    })();
    await new Promise((r) => setTimeout(r, 10));
    expect(put).toBe(2);
    expect(q.length).toBe(2);
    const got: number[] = [];
    for (let v = await q.take(); v !== undefined; v = await q.take()) got.push(v);
    await producer;
    expect(got).toEqual([1, 2, 3, 4, 5]);
  });

  it('abandon drops what is queued and releases producer and takers', async () => {
    const q = new BoundedQueue<number>(1);
    await q.put(1);
    const blocked = q.put(2);
    q.abandon();
    await blocked;
    expect(await q.take()).toBeUndefined();
  });
});

describe('pure checks added against a hostile store', () => {
  it('takes an ETag for an MD5 only where no KMS or customer key encrypts the object', () => {
    const etag = `"${'ab'.repeat(16)}"`;
    expect(contentMd5(etag, {})).toBe('ab'.repeat(16));
    expect(contentMd5(etag, { sse: 'AES256' })).toBe('ab'.repeat(16));
    expect(contentMd5(etag, { sse: 'aws:kms' })).toBeUndefined();
    expect(contentMd5(etag, { sse: 'aws:kms:dsse' })).toBeUndefined();
    expect(contentMd5(etag, { sseCustomerAlgorithm: 'AES256' })).toBeUndefined();
    expect(contentMd5(`"${'ab'.repeat(16)}-2"`, {})).toBeUndefined();
  });

  it('shows control characters escaped', () => {
    expect(printable('a\x1b]0;T\x07\x1b[2Jb\nc\u009b')).toBe('a\\x1b]0;T\\x07\\x1b[2Jb\\nc\\x9b');
  });

  it('keeps at most MAX_COLLISION_KEYS keys of one path and counts the rest', () => {
    const c = new PathClaims(false);
    for (let i = 0; i < MAX_COLLISION_KEYS + 50; i++) c.claim(`${'/'.repeat(i)}f`, 'f');
    c.claim('//f', 'f'); // a repeat of a kept alias counts once
    const [only] = c.collisions();
    expect({ kept: only!.keys.length, more: only!.more }).toEqual({ kept: MAX_COLLISION_KEYS, more: 50 });
    expect(describeCollisions(c.collisions())).toMatch(/and 145 more keys → f$/);
  });
});
