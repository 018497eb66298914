// Readahead across files (docs/SEMANTICS.md, "read, across files"): "open() uses a guess only
// when a HEAD made inside that open() shows the same ETag and size as the data fetched: data
// fetched before the open is used only when it is provably what the open would have read".
//
// A check that compared the HEAD with the guess's FIRST GET only would let the guess's other GETs
// (its readahead past the first MiB), unless each asks for one version, come from another version
// of the object:
//
// 1. One replacement, one slow answer: the store (or a proxy, a busy node) answers the guess's
//    first GET after another client replaced the file, and its readahead GETs before. The HEAD
//    agrees with the first GET (both new), so the guess is taken with old bytes behind the first
//    MiB: the file opened after the replacement reads new, then old bytes.
// 2. Replaced twice (A, B, A again, same size; MinIO's ETag is the MD5, so A's ETag comes back):
//    the guess's first GET saw A, its readahead saw B, the open's HEAD sees A: taken, and the
//    reader gets B's bytes inside A.
//
// Either would read a file as a mix of two versions, which "read" promises never happens.

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket } from '../mount-helpers.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { MiB, type RelayRequest, show, startDriver, startRelay, versions, walkBucket } from './ra3-lib.ts';

const fuse = fuseAvailable();
const minio = await minioAvailable();

const A = randomBytes(12 * MiB);
const B = randomBytes(12 * MiB);

async function setUp() {
  const { server, other, etag: etagA } = await walkBucket(A);
  const relay = await startRelay(server, 'ra3');
  const m = await mountBucket(relay.server, 'ra3');
  const d = await startDriver();
  expect((await d.cmd({ op: 'listdir', path: `${m.dir}/d` })).names?.sort()).toEqual(['a0', 'a1', 'f1', 'f2']);
  return { other, relay, m, d, etagA };
}

const f2Get = (r: RelayRequest) => r.method === 'GET' && r.key === 'd/f2';

describe.runIf(fuse.ok && minio.ok)('readahead across files: the guess\'s GETs of two versions', () => {
  it('one replacement while the guess\'s first GET waits: the file opened after it is all new bytes', async () => {
    const { other, relay, m, d } = await setUp();
    // The store is slow to answer one request: the guess's first GET of f2.
    let held = false;
    relay.hold = (r) => {
      if (held || !f2Get(r) || r.rangeStart !== 0) return false;
      held = true;
      return true;
    };
    for (const f of ['a0', 'a1', 'f1']) expect((await d.cmd({ op: 'readall', path: `${m.dir}/d/${f}` })).err).toBeUndefined();
    // The guess of f2 is under way: its first GET waits, its readahead GETs have their answers.
    await relay.waitFor((r) => f2Get(r) && r.rangeStart === 0);
    await relay.waitFor((r) => f2Get(r) && (r.rangeStart ?? 0) > 0 && r.done === true);
    // Another client replaces f2 (same size), then the slow answer goes out.
    await other.put('d/f2', B);
    relay.release();
    await relay.waitFor((r) => f2Get(r) && r.rangeStart === 0 && r.done === true);
    // Opened after the replacement: close-to-open says B, all of it.
    const got = await d.cmd({ op: 'readall', path: `${m.dir}/d/f2` });
    const seen = got.mibs ? versions(got.mibs, A, B) : `error ${got.err} at ${got.pos}`;
    expect(seen, `MiB by MiB, which version f2 read as (A old, B new); requests:\n${relay.requests.filter(f2Get).map(show).join('\n')}`).toBe(
      'B'.repeat(12),
    );
  });

  it('replaced twice, A B A: the file opened after it is A, all of it', async () => {
    const { other, relay, m, d, etagA } = await setUp();
    // The guess's readahead GETs (past its first MiB) wait while f2 is B.
    let holding = true;
    relay.hold = (r) => holding && f2Get(r) && (r.rangeStart ?? 0) > 0;
    for (const f of ['a0', 'a1', 'f1']) expect((await d.cmd({ op: 'readall', path: `${m.dir}/d/${f}` })).err).toBeUndefined();
    await relay.waitFor((r) => f2Get(r) && r.rangeStart === 0 && r.done === true);
    await relay.waitFor((r) => f2Get(r) && (r.rangeStart ?? 0) > 0);
    await other.put('d/f2', B);
    holding = false;
    relay.release();
    await relay.waitFor((r) => f2Get(r) && (r.rangeStart ?? 0) > 0 && r.done === true);
    // Back to A: the same bytes, so the same ETag (MinIO's is the MD5 of a single PUT).
    expect(await other.put('d/f2', A)).toBe(etagA);
    const got = await d.cmd({ op: 'readall', path: `${m.dir}/d/f2` });
    const seen = got.mibs ? versions(got.mibs, A, B) : `error ${got.err} at ${got.pos}`;
    expect(seen, `MiB by MiB, which version f2 read as; requests:\n${relay.requests.filter(f2Get).map(show).join('\n')}`).toBe('A'.repeat(12));
  });
});
