// Readahead across files in inode-number order (what GNU cp -r reads in; docs/SEMANTICS.md,
// "read, across files"). The index of a listing's files by inode number is made once per cached
// listing (keyed by the listing's Map), but the mount changes that Map in
// place when a file is removed or renamed through it (EntryCache.remove/put). The index kept the
// removed name, handed it out, and guessNext reads `listing.get(name)!.size` of a name
// the listing no longer has.
//
// What a user does: cp -r (or any walker in inode order) of a directory while another process on
// the same host removes or renames one of its files (a build cleaning up, `mv` of a finished
// output). Promise: a guess "costs the bytes fetched ... and nothing else": every other file reads
// whole, and the mount stays up.

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { WalkIndex } from '../../../fuse/fs/next-file.ts';
import { inodeHash } from '../../../fuse/fs/inodes.ts';
import { fuseAvailable, mountBucket } from '../mount-helpers.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { mibDigests, Other, startDriver } from './ra3-lib.ts';

const fuse = fuseAvailable();
const minio = await minioAvailable();
const SIZE = 300 * 1024;

/**
 * Ten names whose inode order never follows their listing order for two files in a row, so that
 * the mount learns "inode" from the walk and keeps it. Listing order is S3's: by key bytes.
 */
function namesInInodeOrder(): string[] {
  for (let salt = 0; ; salt++) {
    const names = Array.from({ length: 10 }, (_, i) => `n${salt}-${i}`).sort();
    const byIno = [...names].sort((a, b) => inodeHash(`d/${a}`) - inodeHash(`d/${b}`));
    const listing = new Map(names.map((n) => [n, { kind: 'file', size: SIZE }] as [string, { kind: string; size: number }]));
    const byName = new WalkIndex(listing, 'name', () => 0);
    if (byIno.every((n, i) => i === 0 || byName.next(byIno[i - 1]!) !== n)) return byIno;
  }
}

describe.runIf(fuse.ok && minio.ok)('readahead across files by inode number, after a removal through the mount', () => {
  it.each(['rm', 'rename'] as const)('a walker in inode order reads every file whole after a %s of one of them', async (how) => {
    const server = await startMinio({ buckets: ['ra3'] });
    const other = new Other(server, 'ra3');
    const order = namesInInodeOrder();
    const bodies = new Map(order.map((n) => [n, randomBytes(SIZE)]));
    for (const n of order) await other.put(`d/${n}`, bodies.get(n)!);
    const m = await mountBucket(server, 'ra3');
    const d = await startDriver();
    const dir = `${m.dir}/d`;
    expect((await d.cmd({ op: 'listdir', path: dir })).names?.length).toBe(10);
    // The mount's inode numbers are the ones the walk assumed.
    const inos = [];
    for (const n of order) inos.push((await d.cmd({ op: 'stat', path: `${dir}/${n}` })).ino!);
    expect([...inos].sort((a, b) => a - b)).toEqual(inos);
    // Two files in inode order: the mount learns the walker's order and indexes the listing.
    for (const n of order.slice(0, 2)) expect((await d.cmd({ op: 'readall', path: `${dir}/${n}` })).mibs).toEqual(mibDigests(bodies.get(n)!));
    // Another process on this host removes (or renames away) the fifth file.
    const gone = order[4]!;
    if (how === 'rm') expect((await d.cmd({ op: 'rm', path: `${dir}/${gone}` })).err).toBeUndefined();
    else expect((await d.cmd({ op: 'rename', from: `${dir}/${gone}`, to: `${m.dir}/${gone}.done` })).err).toBeUndefined();
    // The walk goes on over the files still there.
    const failures: string[] = [];
    for (const n of order.slice(2)) {
      if (n === gone) continue;
      const got = await d.cmd({ op: 'readall', path: `${dir}/${n}` }, 20_000).catch((err: Error) => ({ err: err.message, mibs: undefined, pos: undefined }));
      if (got.err || JSON.stringify(got.mibs) !== JSON.stringify(mibDigests(bodies.get(n)!)))
        failures.push(`${n}: ${got.err ?? 'wrong bytes'} at ${got.pos}`);
    }
    // A process that died leaves its mount in /proc/mounts (not connected): ask the process.
    const alive = m.child.proc.exitCode === null && m.child.proc.signalCode === null;
    const log = m.child
      .output()
      .split('\n')
      .filter((l) => /TypeError|EIO|uncaught|size/.test(l))
      .slice(0, 5)
      .join('\n');
    expect({ failures, alive }, `mount log:\n${log}`).toEqual({ failures: [], alive: true });
  });
});
