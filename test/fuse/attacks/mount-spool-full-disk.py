# Writes through an estuary mount onto a nearly full cache disk; prints one JSON line of what
# each step answered. Usage: mount-spool-full-disk.py PATH CASE
import json, os, sys
MiB = 1 << 20
path, case = sys.argv[1], sys.argv[2]
out = {}
def blk(n, seed):
    return bytes((i * 31 + seed) & 0xff for i in range(256)) * (n // 256) + bytes(n % 256)
def step(name, fn):
    try:
        fn(); out[name] = 'ok'
    except OSError as e:
        out[name] = os.strerror(e.errno) if e.errno else str(e)
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
if case == 'seq-then-seekback':
    def seq():
        for i in range(40): os.write(fd, blk(MiB, i))
    step('sequential', seq)
    step('seekback', lambda: os.pwrite(fd, b'X' * 4097, 4095))
elif case == 'staged-then-grow':
    def first():
        for i in range(11): os.write(fd, blk(MiB, i))
    step('first', first)
    step('seekback', lambda: os.pwrite(fd, b'Y' * 10, 1))
    def more():
        os.lseek(fd, 11 * MiB, os.SEEK_SET)
        for i in range(40): os.write(fd, blk(MiB, 100 + i))
    step('more', more)
step('close', lambda: os.close(fd))
print(json.dumps(out))
