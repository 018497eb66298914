# Out-of-order write patterns on a file in an estuary mount, mirrored on a local reference file.
# Usage: mount-spool-patterns.py MOUNTED_PATH REFERENCE_PATH PATTERN
# Prints nothing on success; the test compares the bucket object with the reference afterwards.
import mmap, os, random, sys, threading

MiB = 1 << 20
path, ref, pattern = sys.argv[1], sys.argv[2], sys.argv[3]

def data(n, seed):
    # Deterministic bytes that differ everywhere: a misplaced block shows as a mismatch.
    return random.Random(seed).randbytes(n)

class Both:
    def __init__(self, flags=os.O_WRONLY | os.O_CREAT | os.O_TRUNC):
        self.fds = [os.open(path, flags, 0o644), os.open(ref, flags, 0o644)]
    def pwrite(self, b, off):
        for fd in self.fds:
            n = os.pwrite(fd, b, off)
            assert n == len(b), (n, len(b))
    def write(self, b):
        for fd in self.fds:
            assert os.write(fd, b) == len(b)
    def seek(self, off):
        for fd in self.fds: os.lseek(fd, off, os.SEEK_SET)
    def truncate(self, n):
        for fd in self.fds: os.ftruncate(fd, n)
    def fsync(self):
        for fd in self.fds: os.fsync(fd)
    def close(self):
        for fd in self.fds: os.close(fd)

def stream(h, total, seed, chunk=128 * 1024):
    at = 0
    while at < total:
        n = min(chunk, total - at)
        h.write(data(n, seed + at))
        at += n

p = pattern
if p.startswith('seekback:'):
    # write 20 MiB sequentially, seek back to an odd offset, write there, then go on writing.
    off = int(p.split(':')[1])
    h = Both(); stream(h, 20 * MiB + 333, 1)
    h.seek(off); h.write(data(7777, 99))
    h.seek(20 * MiB + 333); stream(h, 3 * MiB + 17, 5)
    h.close()
elif p == 'truncate-across':
    h = Both(); stream(h, 12 * MiB + 100, 2)
    h.truncate(5 * MiB + 4097)     # down, across the first part boundary and a block
    h.truncate(9 * MiB + 1)        # up again: a hole of zeros
    h.seek(9 * MiB + 1); stream(h, 2 * MiB + 511, 3)
    h.close()
elif p == 'sparse':
    h = Both(); stream(h, 11 * MiB + 5, 4)
    h.pwrite(data(4096, 7), 40 * MiB + 1)   # past the end
    h.close()
elif p == 'fsync-between':
    h = Both(); stream(h, 11 * MiB, 6); h.fsync()
    h.pwrite(data(100, 8), 4095); h.fsync(); stream(h, MiB + 3, 9)
    h.close()
elif p == 'threads':
    h = Both(); stream(h, 10 * MiB + 9, 10)
    def worker(k):
        for j in range(20):
            off = (k * 7919 + j * 524309) % (12 * MiB)
            b = data(3000 + k, k * 100 + j)
            # same bytes in both files at the same offset; ranges are disjoint per thread
            h.pwrite(b, off + k * 64 * 1024 * 0)
    # disjoint by construction: each thread owns its own 1 MiB stripe
    def stripe(k):
        for j in range(16):
            off = k * MiB + j * 65536 + (k % 3)
            h.pwrite(data(60000, k * 1000 + j), off)
    ts = [threading.Thread(target=stripe, args=(k,)) for k in range(8)]
    [t.start() for t in ts]; [t.join() for t in ts]
    h.close()
elif p == 'append':
    h = Both(); stream(h, 10 * MiB + 1, 11); h.close()
    a = Both(os.O_WRONLY | os.O_APPEND)
    a.write(data(5 * MiB + 4097, 12)); a.close()
elif p == 'mmap':
    h = Both(); stream(h, 10 * MiB + 123, 13); h.close()
    for f in (path, ref):
        fd = os.open(f, os.O_RDWR)
        m = mmap.mmap(fd, 0)
        m[4095:4095 + 9000] = data(9000, 14)
        m.flush(); m.close(); os.close(fd)
elif p == 'readback':
    # read sent bytes through the same handle, then keep writing
    fds = [os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644), os.open(ref, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)]
    for fd in fds:
        at = 0
        while at < 18 * MiB + 77:
            n = min(131072, 18 * MiB + 77 - at); os.write(fd, data(n, 15 + at)); at += n
    got = [os.pread(fd, 8193, 5 * MiB - 4096 + 1) for fd in fds]
    assert got[0] == got[1], 'read of sent bytes differs'
    for fd in fds: os.write(fd, data(12345, 16)); os.close(fd)
else:
    raise SystemExit('unknown pattern ' + p)
