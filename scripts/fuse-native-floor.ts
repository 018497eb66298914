// What fuse-native itself costs a mount's downloads: a filesystem on fuse-native (the binding the
// mount uses, with the same `big_writes` option) holding one file whose reads are answered at once
// from one buffer in memory, with no S3 and no cache behind it; beside it, taking turns, the same
// filesystem written in C on libfuse 2 (compiled here when gcc and Debian's libfuse-dev are
// present), which answers in libfuse's own threads. Each run drops the page cache and reads the
// whole file with `dd bs=1M`, then prints the rate and the filesystem process's CPU time per GB
// (user + system of all its threads), and the load average. The difference between the two is
// what handing every request to the event loop and back costs.
// Results: docs/BENCHMARKING.md, "Against mountpoint-s3 alone, and where a download's time goes".
//
//   node scripts/fuse-native-floor.ts [--runs 7] [--mb 1000]
//
// Needs root (or FUSE and permission to write /proc/sys/vm/drop_caches).

import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { loadavg, median, processCpuSeconds } from './mount-trees.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '7' }, mb: { type: 'string', default: '1000' } } });
const RUNS = Number(values.runs);
const SIZE = Number(values.mb) * 1e6;

type Cb = (...args: unknown[]) => void;
interface FuseLike {
  mount(cb: (err: Error | null) => void): void;
  unmount(cb: (err: Error | null) => void): void;
}
const Fuse = createRequire(import.meta.url)('fuse-native') as {
  new (mnt: string, ops: Record<string, unknown>, opts: Record<string, unknown>): FuseLike;
  ENOENT: number;
};

const source = Buffer.alloc(1024 * 1024, 7);
const stat = (mode: number, size: number) => {
  const now = new Date();
  return { mtime: now, atime: now, ctime: now, nlink: 1, size, mode, uid: 0, gid: 0 };
};
const ops = {
  readdir: (p: string, cb: Cb) => cb(0, p === '/' ? ['f'] : []),
  getattr: (p: string, cb: Cb) => {
    if (p === '/') return cb(0, stat(0o40755, 4096));
    if (p === '/f') return cb(0, stat(0o100644, SIZE));
    return cb(Fuse.ENOENT);
  },
  open: (_p: string, _flags: number, cb: Cb) => cb(0, 1),
  release: (_p: string, _fd: number, cb: Cb) => cb(0),
  read: (_p: string, _fd: number, buf: Buffer, len: number, pos: number, cb: Cb) => {
    const n = Math.max(0, Math.min(len, SIZE - pos, source.length));
    source.copy(buf, 0, 0, n);
    cb(n);
  },
};

/** The same filesystem in C on libfuse 2: one file of `size` bytes, every read answered from one buffer. */
const C_SOURCE = `#define FUSE_USE_VERSION 26
#include <fuse.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
static off_t size;
static char src[1 << 20];
static int getattr_(const char *p, struct stat *st) {
  memset(st, 0, sizeof *st);
  if (!strcmp(p, "/")) { st->st_mode = 040755; st->st_nlink = 2; return 0; }
  if (!strcmp(p, "/f")) { st->st_mode = 0100644; st->st_nlink = 1; st->st_size = size; return 0; }
  return -ENOENT;
}
static int open_(const char *p, struct fuse_file_info *fi) { return 0; }
static int read_(const char *p, char *buf, size_t len, off_t off, struct fuse_file_info *fi) {
  off_t n = size - off;
  if (n > (off_t)len) n = len;
  if (n > (off_t)sizeof src) n = sizeof src;
  if (n < 0) n = 0;
  memcpy(buf, src, n);
  return n;
}
static struct fuse_operations ops = { .getattr = getattr_, .open = open_, .read = read_ };
int main(int argc, char **argv) {
  size = atoll(getenv("FLOOR_SIZE"));
  memset(src, 7, sizeof src);
  return fuse_main(argc, argv, &ops, NULL);
}
`;

/** Mounts the C filesystem at `mnt`; undefined when it cannot be built here. */
function startC(dir: string, mnt: string): ChildProcess | undefined {
  const src = join(dir, 'floor.c');
  const bin = join(dir, 'floor');
  writeFileSync(src, C_SOURCE);
  try {
    execFileSync('gcc', ['-O2', '-D_FILE_OFFSET_BITS=64', '-I/usr/include/fuse', src, '-o', bin, '-lfuse'], { stdio: 'pipe' });
  } catch {
    console.log('the C filesystem is left out: it needs gcc and libfuse-dev (apt-get install gcc libfuse-dev)');
    return undefined;
  }
  mkdirSync(mnt);
  return spawn(bin, ['-f', '-o', 'big_writes', mnt], { env: { ...process.env, FLOOR_SIZE: String(SIZE) }, stdio: 'inherit' });
}

async function mounted(mnt: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (readFileSync('/proc/self/mountinfo', 'utf8').split('\n').some((l) => l.split(' ')[4] === mnt)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${mnt} did not mount`);
}

/** One run over `file`: MB/s and the CPU seconds per GB of process `pid`. */
async function readOnce(file: string, pid: number | 'self'): Promise<{ rate: number; perGb: number }> {
  execFileSync('sh', ['-c', 'sync; echo 3 > /proc/sys/vm/drop_caches']);
  const c0 = processCpuSeconds(pid);
  const t0 = process.hrtime.bigint();
  // dd runs in a child, so this process's event loop stays free to answer FUSE's requests.
  await promisify(execFile)('dd', [`if=${file}`, 'of=/dev/null', 'bs=1M', 'status=none']);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  return { rate: SIZE / 1e6 / seconds, perGb: (processCpuSeconds(pid) - c0) / (SIZE / 1e9) };
}

const work = mkdtempSync(join(tmpdir(), 'estuary-fuse-floor-'));
const mnt = join(work, 'mnt');
mkdirSync(mnt);
const fuse = new Fuse(mnt, ops, { fsname: 'fuse-floor,big_writes', force: true });
await new Promise<void>((resolve, reject) => fuse.mount((err) => (err ? reject(err) : resolve())));
const cMnt = join(work, 'mnt-c');
const c = startC(work, cMnt);
const samples: Record<string, { rate: number; perGb: number }[]> = { 'fuse-native': [], 'libfuse 2 in C': [] };
try {
  if (c) await mounted(cMnt);
  for (let run = 1; run <= RUNS; run++) {
    samples['fuse-native']!.push(await readOnce(join(mnt, 'f'), 'self'));
    if (c) samples['libfuse 2 in C']!.push(await readOnce(join(cMnt, 'f'), c.pid!));
    for (const [name, xs] of Object.entries(samples)) {
      const x = xs[run - 1];
      if (x) console.log(`run ${run} ${name}: ${x.rate.toFixed(0)} MB/s, ${x.perGb.toFixed(2)} CPU s/GB, load ${loadavg()}`);
    }
  }
  for (const [name, xs] of Object.entries(samples)) {
    if (xs.length === 0) continue;
    const rate = median(xs.map((x) => x.rate));
    const perGb = median(xs.map((x) => x.perGb));
    console.log(`median ${name}: ${rate.toFixed(0)} MB/s, ${perGb.toFixed(2)} CPU s/GB`);
  }
} finally {
  if (c) {
    execFileSync('umount', [cMnt], { stdio: 'ignore' });
    c.kill();
  }
  await new Promise<void>((resolve) => fuse.unmount(() => resolve()));
  rmSync(work, { recursive: true, force: true });
}
