// A passthrough FUSE file system (fuse-native) mounting SRC at MNT with kernel_cache, as a
// network file system would; the test stops this process (SIGSTOP) to make the file system hang.
// Usage: node gwmap2-passfs.ts SRC MNT
import fs from 'node:fs';
import { createRequire } from 'node:module';

type Cb = (code: number, result?: unknown) => void;
const Fuse = createRequire(import.meta.url)('fuse-native') as any;
const [src, mnt] = process.argv.slice(2) as [string, string];
const p = (x: string) => src + x;
const wrap = (fn: (...a: any[]) => unknown) => (...args: any[]) => {
  const cb = args.pop() as Cb;
  try {
    const r = fn(...args);
    cb(0, r);
  } catch (e: any) {
    cb(typeof e.errno === 'number' ? e.errno : Fuse.EIO);
  }
};
const ops = {
  getattr: wrap((x) => fs.lstatSync(p(x))),
  fgetattr: wrap((x, fd) => fs.fstatSync(fd)),
  readdir: wrap((x) => fs.readdirSync(p(x))),
  open: wrap((x, flags) => fs.openSync(p(x), flags)),
  create: wrap((x, mode) => fs.openSync(p(x), fs.constants.O_CREAT | fs.constants.O_RDWR, mode)),
  read: (_x: string, fd: number, buf: Buffer, len: number, pos: number, cb: (n: number) => void) => {
    try {
      cb(fs.readSync(fd, buf, 0, len, pos));
    } catch (e: any) {
      cb(e.errno);
    }
  },
  write: (_x: string, fd: number, buf: Buffer, len: number, pos: number, cb: (n: number) => void) => {
    try {
      cb(fs.writeSync(fd, buf, 0, len, pos));
    } catch (e: any) {
      cb(e.errno);
    }
  },
  release: wrap((x, fd) => fs.closeSync(fd)),
  flush: wrap(() => undefined),
  fsync: wrap(() => undefined),
  truncate: wrap((x, size) => fs.truncateSync(p(x), size)),
  ftruncate: wrap((x, fd, size) => fs.ftruncateSync(fd, size)),
  unlink: wrap((x) => fs.unlinkSync(p(x))),
  rename: wrap((a, b) => fs.renameSync(p(a), p(b))),
  link: wrap((a, b) => fs.linkSync(p(a), p(b))),
  mkdir: wrap((x, mode) => fs.mkdirSync(p(x), mode)),
  rmdir: wrap((x) => fs.rmdirSync(p(x))),
  chmod: wrap((x, mode) => fs.chmodSync(p(x), mode)),
  chown: wrap(() => undefined),
  utimens: wrap((x, a, m) => fs.utimesSync(p(x), a, m)),
  access: wrap(() => undefined),
  statfs: wrap(() => {
    const s = fs.statfsSync(src);
    return { bsize: s.bsize, frsize: s.bsize, blocks: s.blocks, bfree: s.bfree, bavail: s.bavail, files: s.files, ffree: s.ffree, favail: s.ffree, fsid: 1, flag: 0, namemax: 255 };
  }),
};
const fuse = new Fuse(mnt, ops, { kernelCache: true, timeout: false });
fuse.mount((err: unknown) => {
  if (err) {
    console.error(String(err));
    process.exit(1);
  }
  console.log('mounted');
});
process.on('SIGTERM', () => fuse.unmount(() => process.exit(0)));
