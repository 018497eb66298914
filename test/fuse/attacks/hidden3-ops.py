# Operations for hidden3-*.test.ts, run against a real mount: python3 hidden3-ops.py <case> <mount> [args]
import os, sys, json, threading

case, M = sys.argv[1], sys.argv[2]
out = {}

def write(path, data):
    with open(path, 'wb') as f:
        f.write(data)

def remove_open(path, data):
    """Create path, write data, remove it while open; return the open descriptor."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, data)
    os.fsync(fd)
    os.unlink(path)
    return fd

if case == 'user-rename-open':
    # n removals of open files: libfuse's count is now n.
    n = int(sys.argv[3])
    for i in range(n):
        fd = remove_open(f'{M}/gone{i}', b'gone')
        os.close(fd)
    # The user's file, held open by a reader, renamed to the name of libfuse's next count.
    write(f'{M}/precious', b'precious user data')
    rfd = os.open(f'{M}/precious', os.O_RDONLY)
    user = '.fuse_hidden%08x%08x' % (0x7777, n + 1)
    os.rename(f'{M}/precious', f'{M}/{user}')
    os.close(rfd)
    out['user'] = user
    out['listing'] = sorted(os.listdir(M))
elif case == 'user-then-real':
    # The user's rename takes libfuse's next count; then a real removal of an open file, and
    # the mount is killed while that file is still open.
    n = int(sys.argv[3])
    pid = int(sys.argv[4])
    for i in range(n):
        os.close(remove_open(f'{M}/gone{i}', b'gone'))
    write(f'{M}/mine', b'mine')
    rfd = os.open(f'{M}/mine', os.O_RDONLY)
    os.rename(f'{M}/mine', f'{M}/.fuse_hidden%08x%08x' % (0x7777, n + 1))
    os.close(rfd)
    fd = remove_open(f'{M}/secret', b'removed secret bytes')
    out['listing'] = sorted(os.listdir(M))
    sys.stdout.write(json.dumps(out) + '\n'); sys.stdout.flush()
    os.kill(pid, 9)
    sys.exit(0)
elif case == 'push-window':
    # The user renames open files to counts far ahead, one window at a time, then real removals.
    pid = int(sys.argv[3])
    for k in range(1, 4):
        write(f'{M}/u{k}', b'u')
        rfd = os.open(f'{M}/u{k}', os.O_RDONLY)
        os.rename(f'{M}/u{k}', f'{M}/.fuse_hidden%08x%08x' % (0x7777, 64 * k))
        os.close(rfd)
    fd = remove_open(f'{M}/secret', b'removed secret bytes')
    out['listing'] = sorted(os.listdir(M))
    sys.stdout.write(json.dumps(out) + '\n'); sys.stdout.flush()
    os.kill(pid, 9)
    sys.exit(0)
elif case == 'parallel':
    # n files removed while open at once from n threads; keep them open, then close all.
    n = int(sys.argv[3])
    for i in range(n):
        write(f'{M}/p{i}', b'p%d' % i)
    fds = [os.open(f'{M}/p{i}', os.O_RDWR) for i in range(n)]
    for i in range(n):
        write(f'{M}/keep{i}', b'keep%d' % i)
    barrier = threading.Barrier(n)
    errs = []
    def rm(i):
        barrier.wait()
        try:
            os.unlink(f'{M}/p{i}')
        except OSError as e:
            errs.append(str(e))
    ts = [threading.Thread(target=rm, args=(i,)) for i in range(n)]
    [t.start() for t in ts]; [t.join() for t in ts]
    out['errs'] = errs
    bad = []
    for i, fd in enumerate(fds):
        os.lseek(fd, 0, 0)
        got = os.read(fd, 100)
        if got != b'p%d' % i: bad.append([i, got.decode()])
        os.write(fd, b'more')
    out['bad_reads'] = bad
    out['listing_open'] = sorted(os.listdir(M))
    for fd in fds: os.close(fd)
    out['listing'] = sorted(os.listdir(M))
sys.stdout.write(json.dumps(out) + '\n')
