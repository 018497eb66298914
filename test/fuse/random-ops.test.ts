// Random sequences of file operations (writes at random offsets, truncates, opens, reads through
// several handles at once, closes, renames, unlinks, mkdir/rmdir) run in lockstep on a real mount
// and on a local directory, the oracle: every result and every errno must match, and at the end
// the tree, read back through a fresh mount, must equal the oracle's. Both modes.
//
// Small in CI; ESTUARY_RANDOM_OPS=5000 runs a long one, ESTUARY_RANDOM_SEED replays a failure.
// What the oracle cannot model because the mount differs by design (docs/SEMANTICS.md) is kept
// out of the sequences: rename or unlink of a file that is open (the model closes its handles
// first), and files past 16 MiB (a reader of a file whose writer already streams parts gets
// EBUSY). Several writable descriptors of one file, and readers opened before or while it is
// written, are in.

import { createHash } from 'node:crypto';
import { type FileHandle, mkdir, open, readdir, readFile, rename, rmdir, truncate, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../helpers/cleanup.ts';
import { startS3rver } from '../helpers/s3rver.ts';
import { tempDir } from '../helpers/tmp.ts';
import { fuseAvailable, mountBucket, sh } from './mount-helpers.ts';
import { seeded } from '../../lib/seeded.ts';

afterAll(runTeardowns);

const OPS = Number(process.env.ESTUARY_RANDOM_OPS ?? 150);
const SEED = Number(process.env.ESTUARY_RANDOM_SEED ?? Date.now() % 1_000_000);
const NAMES = ['a', 'b', 'c', 'd/e', 'd/f'];
const MAX_SIZE = 300 * 1024;


interface Open {
  readonly name: string;
  readonly writable: boolean;
  readonly fh: [FileHandle, FileHandle];
}

type Outcome = string;

async function outcome(p: Promise<unknown>): Promise<Outcome> {
  try {
    const v = await p;
    if (Buffer.isBuffer(v)) return `ok ${v.length} ${createHash('md5').update(v).digest('hex')}`;
    return `ok ${v === undefined ? '' : JSON.stringify(v)}`;
  } catch (err) {
    return `error ${(err as NodeJS.ErrnoException).code ?? String(err)}`;
  }
}

async function readAll(fh: FileHandle, at: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const { bytesRead } = await fh.read(buf, got, length - got, at + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return buf.subarray(0, got);
}

async function tree(root: string, dir = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of (await readdir(join(root, dir), { withFileTypes: true })).sort((x, y) => (x.name < y.name ? -1 : 1))) {
    const rel = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(`${rel}/`, ...(await tree(root, rel)));
    else out.push(`${rel} ${createHash('md5').update(await readFile(join(root, rel))).digest('hex')}`);
  }
  return out;
}

async function runSequence(
  mnt: string,
  oracle: string,
  seed: number,
  ops: number,
  log: string[],
  mountLog: () => string,
): Promise<void> {
  const rand = seeded(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const int = (n: number) => Math.floor(rand() * n);
  const roots = [oracle, mnt] as const;
  const opens: Open[] = [];
  const both = async (what: string, fn: (root: string, side: 0 | 1) => Promise<unknown>) => {
    const a = await outcome(fn(roots[0], 0));
    const b = await outcome(fn(roots[1], 1));
    log.push(`${what}: ${a}`);
    const warnings = () => mountLog().split('\n').filter((l) => /"level":[456]0/.test(l)).slice(-5);
    expect(b, `seed ${seed}, step ${log.length}: ${what}\n${log.slice(-Number(process.env.ESTUARY_RANDOM_TAIL ?? 15)).join('\n')}\n${warnings().join('\n')}`).toBe(a);
  };
  const closeAll = async (name: string) => {
    for (const o of opens.filter((x) => x.name === name)) {
      opens.splice(opens.indexOf(o), 1);
      await both(`close ${o.name}`, (_r, side) => o.fh[side].close());
    }
  };
  const openOn = async (name: string, writable: boolean, flags: string) => {
    // Descriptors are plentiful but not endless: past 8 open ones, open no more.
    if (!writable && opens.length > 8) return;
    const fh: (FileHandle | undefined)[] = [];
    await both(`open ${name} ${flags}`, async (root, side) => {
      fh[side] = await open(join(root, name), flags);
    });
    if (fh[0] && fh[1]) opens.push({ name, writable, fh: [fh[0], fh[1]] });
    else await Promise.all(fh.map((h) => h?.close()));
  };
  await both('mkdir d', (root) => mkdir(join(root, 'd')));
  for (let step = 0; step < ops; step++) {
    const name = pick(NAMES);
    const r = rand();
    const writers = opens.filter((o) => o.name === name && o.writable);
    const writer = writers.length > 0 ? pick(writers) : undefined;
    if (r < 0.12) {
      await openOn(name, true, pick(['r+', 'w', 'a+', 'w+']));
    } else if (r < 0.22) {
      if (!writer) await openOn(name, false, 'r');
    } else if (r < 0.42 && writer) {
      const data = Buffer.alloc(1 + int(64 * 1024), int(256));
      const at = int(MAX_SIZE - data.length);
      await both(`write ${name} ${data.length}@${at}`, (_r, side) => writer.fh[side].write(data, 0, data.length, at));
    } else if (r < 0.52 && opens.length > 0) {
      // Every handle open on one file reads the same range at once, as concurrent readers do.
      const o = pick(opens);
      const at = int(MAX_SIZE);
      const length = 1 + int(128 * 1024);
      const same = opens.filter((x) => x.name === o.name);
      await both(`read ${o.name} ×${same.length} ${length}@${at}`, async (_r, side) =>
        Buffer.concat(await Promise.all(same.map((x) => readAll(x.fh[side], at, length)))),
      );
    } else if (r < 0.6 && opens.length > 0) {
      const o = pick(opens);
      opens.splice(opens.indexOf(o), 1);
      await both(`close ${o.name}`, (_r, side) => o.fh[side].close());
    } else if (r < 0.68) {
      const size = pick([0, int(MAX_SIZE), int(4096)]);
      if (writer && rand() < 0.5) await both(`ftruncate ${name} ${size}`, (_r, side) => writer.fh[side].truncate(size));
      else await both(`truncate ${name} ${size}`, (root) => truncate(join(root, name), size));
    } else if (r < 0.76) {
      const to = pick(NAMES);
      await closeAll(name);
      await closeAll(to);
      await both(`rename ${name} ${to}`, (root) => rename(join(root, name), join(root, to)));
    } else if (r < 0.82) {
      await closeAll(name);
      await both(`unlink ${name}`, (root) => unlink(join(root, name)));
    } else if (r < 0.86) {
      for (const n of NAMES.filter((x) => x.startsWith('d/'))) await closeAll(n);
      await both('rmdir d', (root) => rmdir(join(root, 'd')));
      await both('mkdir d', (root) => mkdir(join(root, 'd')));
    } else {
      await both(`read whole ${name}`, (root) => readFile(join(root, name)));
    }
  }
  for (const o of opens.splice(0)) await both(`close ${o.name}`, (_r, side) => o.fh[side].close());
}

describe.runIf(fuseAvailable().ok)('random operation sequences against a local directory', () => {
  for (const mode of ['default', 'write-back'] as const) {
    it(`gives the same results and leaves the same tree (${mode}, seed ${SEED})`, async () => {
      const server = await startS3rver({ buckets: ['ops'] });
      const cacheDir = await tempDir('estuary-ops-cache-');
      const extra = ['--cache-ttl', '2s', ...(mode === 'write-back' ? ['--write-back', '--cache-dir', cacheDir] : [])];
      const oracle = await tempDir('estuary-oracle-');
      const m = await mountBucket(server, 'ops', extra);
      const log: string[] = [];
      await runSequence(m.dir, oracle, SEED + (mode === 'default' ? 0 : 1), OPS, log, () => m.child.output());
      const expected = await tree(oracle);
      expect(await tree(m.dir)).toEqual(expected);
      // What the bucket holds, read through a fresh mount once this one has uploaded everything.
      expect(await m.child.stop('SIGTERM', 60_000)).toBe(0);
      await sh(`fusermount -uz '${m.dir}'`);
      const again = await mountBucket(server, 'ops', extra);
      expect(await tree(again.dir)).toEqual(expected);
      expect(await again.child.stop('SIGTERM', 60_000)).toBe(0);
    }, 180_000);
  }
});
