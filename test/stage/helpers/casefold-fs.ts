// A case-insensitive filesystem for tests, as vfat, an SMB share or a macOS volume are: a FUSE
// passthrough (fuse-native) to a backing directory in which a name is found whatever its case.
// Run as its own process (`node casefold-fs.ts BACKING MNT`; prints `mounted`), so a hung
// operation cannot wedge the test worker; SIGTERM unmounts it.

import fs from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

type Cb = (code: number, ...result: unknown[]) => void;
interface FuseInstance {
  mount(cb: (err: Error | null) => void): void;
  unmount(cb: (err: Error | null) => void): void;
}
type FuseClass = (new (mnt: string, ops: Record<string, unknown>, opts: Record<string, unknown>) => FuseInstance) & Record<string, unknown>;
const Fuse = createRequire(import.meta.url)('fuse-native') as FuseClass;

const [backing, mnt] = process.argv.slice(2) as [string, string];

/** The backing path of `p`: each segment matched exactly, else case-insensitively, else as given. */
function real(p: string): string {
  let cur = backing;
  for (const seg of p.split('/').filter((s) => s !== '')) {
    let name = seg;
    if (!fs.existsSync(join(cur, seg))) {
      const found = (fs.existsSync(cur) ? fs.readdirSync(cur) : []).find((n) => n.toLowerCase() === seg.toLowerCase());
      if (found) name = found;
    }
    cur = join(cur, name);
  }
  return cur;
}

const errno = (err: unknown) => {
  const n = Fuse[(err as NodeJS.ErrnoException).code ?? 'EIO'];
  return typeof n === 'number' ? n : (Fuse.EIO as number);
};
const run = (cb: Cb, work: () => unknown[] | number | void) => {
  try {
    const r = work();
    if (typeof r === 'number') cb(r);
    else cb(0, ...(r ?? []));
  } catch (err) {
    cb(errno(err));
  }
};
const attr = (st: fs.Stats) => ({ mode: st.mode, uid: st.uid, gid: st.gid, size: st.size, nlink: st.nlink, mtime: st.mtime, atime: st.atime, ctime: st.ctime, blksize: 4096, blocks: st.blocks });

const ops = {
  getattr: (p: string, cb: Cb) => run(cb, () => [attr(fs.lstatSync(real(p)))]),
  fgetattr: (_p: string, fd: number, cb: Cb) => run(cb, () => [attr(fs.fstatSync(fd))]),
  readdir: (p: string, cb: Cb) => run(cb, () => [['.', '..', ...fs.readdirSync(real(p))]]),
  open: (p: string, flags: number, cb: Cb) => run(cb, () => [fs.openSync(real(p), flags & ~fs.constants.O_CREAT)]),
  create: (p: string, mode: number, cb: Cb) => run(cb, () => [fs.openSync(real(p), fs.constants.O_CREAT | fs.constants.O_RDWR, mode)]),
  read: (_p: string, fd: number, buf: Buffer, len: number, pos: number, cb: Cb) => run(cb, () => fs.readSync(fd, buf, 0, len, pos)),
  write: (_p: string, fd: number, buf: Buffer, len: number, pos: number, cb: Cb) => run(cb, () => fs.writeSync(fd, buf, 0, len, pos)),
  flush: (_p: string, _fd: number, cb: Cb) => cb(0),
  fsync: (_p: string, _d: number, fd: number, cb: Cb) => run(cb, () => fs.fsyncSync(fd)),
  release: (_p: string, fd: number, cb: Cb) => run(cb, () => fs.closeSync(fd)),
  truncate: (p: string, size: number, cb: Cb) => run(cb, () => fs.truncateSync(real(p), size)),
  ftruncate: (_p: string, fd: number, size: number, cb: Cb) => run(cb, () => fs.ftruncateSync(fd, size)),
  unlink: (p: string, cb: Cb) => run(cb, () => fs.unlinkSync(real(p))),
  mkdir: (p: string, mode: number, cb: Cb) => run(cb, () => fs.mkdirSync(real(p), mode)),
  rmdir: (p: string, cb: Cb) => run(cb, () => fs.rmdirSync(real(p))),
  rename: (from: string, to: string, cb: Cb) => run(cb, () => fs.renameSync(real(from), real(to))),
  symlink: (target: string, p: string, cb: Cb) => run(cb, () => fs.symlinkSync(target, real(p))),
  readlink: (p: string, cb: Cb) => run(cb, () => [fs.readlinkSync(real(p))]),
  chmod: (p: string, mode: number, cb: Cb) => run(cb, () => fs.chmodSync(real(p), mode)),
  utimens: (p: string, atime: number, mtime: number, cb: Cb) => run(cb, () => fs.utimesSync(real(p), new Date(atime), new Date(mtime))),
};

const fuse = new Fuse(mnt, ops, { force: true, mkdir: true, timeout: false });
fuse.mount((err) => {
  if (err) {
    process.stderr.write(`mount failed: ${err.message}\n`);
    process.exit(1);
  }
  process.stdout.write('mounted\n');
});
process.once('SIGTERM', () => fuse.unmount(() => process.exit(0)));
