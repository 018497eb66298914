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
    # Each in a directory of its own: the kernel serializes removals within one directory.
    P = [f'{M}/d{i}/p{i}' for i in range(n)]
    for i in range(n):
        os.mkdir(f'{M}/d{i}')
        write(P[i], b'p%d' % i)
    fds = [os.open(P[i], os.O_RDWR) for i in range(n)]
    dirty = os.environ.get('DIRTY') == '1'
    if dirty:
        import random
        rnd = random.Random(7)
        for i, fd in enumerate(fds):
            os.lseek(fd, 0, 2)
            os.write(fd, bytes([65 + i % 26]) * rnd.randrange(0, 3 << 20))
    for i in range(n):
        write(f'{M}/keep{i}', b'keep%d' % i)
    barrier = threading.Barrier(n)
    errs = []
    def rm(i):
        barrier.wait()
        try:
            os.unlink(P[i])
        except OSError as e:
            errs.append(str(e))
    ts = [threading.Thread(target=rm, args=(i,)) for i in range(n)]
    [t.start() for t in ts]; [t.join() for t in ts]
    out['errs'] = errs
    bad = []
    for i, fd in enumerate(fds):
        os.lseek(fd, 0, 0)
        got = os.read(fd, 100)
        if got[:len(b'p%d' % i)] != b'p%d' % i: bad.append([i, got[:20].decode()])
        os.write(fd, b'more')
    out['bad_reads'] = bad
    out['listing_open'] = sorted(os.listdir(M)) + sorted(f'd{i}/{x}' for i in range(n) for x in os.listdir(f'{M}/d{i}'))
    if len(sys.argv) > 4:
        sys.stdout.write(json.dumps(out) + '\n'); sys.stdout.flush()
        os.kill(int(sys.argv[4]), 9)
        sys.exit(0)
    for fd in fds: os.close(fd)
    out['listing'] = sorted(os.listdir(M))
elif case == 'many':
    # A long-running mount: thousands of removals of open files, a few at a time.
    n = int(sys.argv[3])
    write(f'{M}/stay', b'stay')
    for i in range(0, n, 4):
        fds = [remove_open(f'{M}/m{i + k}', b'm') for k in range(4)]
        for fd in fds: os.close(fd)
    out['listing'] = sorted(os.listdir(M))
elif case == 'rmr':
    # rm -r of a directory holding removed open files, then the descriptors, and a new
    # directory and file of the same name meanwhile.
    os.makedirs(f'{M}/d/sub')
    fds = []
    for i in range(5):
        fd = os.open(f'{M}/d/sub/f{i}', os.O_RDWR | os.O_CREAT, 0o644)
        os.write(fd, b'old%d' % i)
        fds.append(fd)
    import subprocess
    r = subprocess.run(['rm', '-r', f'{M}/d'], capture_output=True, text=True)
    out['rm'] = [r.returncode, r.stderr]
    recreate = sys.argv[3] == 'recreate'
    if recreate:
        os.makedirs(f'{M}/d/sub')
        write(f'{M}/d/sub/f0', b'new file')
    res = {'errors': [], 'reads': [], 'sizes': []}
    for i, fd in enumerate(fds):
        def attempt(step, fn):
            try: return fn()
            except OSError as e: res['errors'].append(f'{i} {step}: {e}')
        attempt('write', lambda: os.write(fd, b'+more'))
        res['sizes'].append(attempt('fstat', lambda: os.fstat(fd).st_size))
        attempt('fchmod', lambda: os.fchmod(fd, 0o600))
        attempt('ftruncate', lambda: os.ftruncate(fd, 3))
        attempt('fsync', lambda: os.fsync(fd))
        res['reads'].append(attempt('pread', lambda: os.pread(fd, 100, 0).decode()))
        attempt('futimens', lambda: os.utime(fd, (1, 1)))
        attempt('close', lambda: os.close(fd))
    out.update(res)
    if recreate:
        out['listing'] = sorted(os.listdir(f'{M}/d/sub'))
        out['f0'] = open(f'{M}/d/sub/f0', 'rb').read().decode()
elif case == 'rmr-kill':
    # Files being written in a directory removed with rm -r, written on, then kill -9 of the mount.
    os.makedirs(f'{M}/d/sub')
    write(f'{M}/d/sub/old', b'published')
    fds = [os.open(f'{M}/d/sub/old', os.O_RDWR)]
    for i in range(4):
        fds.append(os.open(f'{M}/d/sub/f{i}', os.O_RDWR | os.O_CREAT, 0o644))
    for fd in fds: os.write(fd, b'x' * 100000)
    import subprocess
    r = subprocess.run(['rm', '-r', f'{M}/d'], capture_output=True, text=True)
    out['rm'] = [r.returncode, r.stderr]
    for fd in fds:
        os.write(fd, b'more')
        os.fsync(fd)
    sys.stdout.write(json.dumps(out) + '\n'); sys.stdout.flush()
    os.kill(int(sys.argv[3]), 9)
    sys.exit(0)
elif case == 'unlink-fops':
    # One file removed while open (its directory stays): the descriptor's operations.
    fd = remove_open(f'{M}/one', b'abc')
    errors = []
    def attempt(step, fn):
        try: return fn()
        except OSError as e: errors.append(f'{step}: {e}')
    attempt('write', lambda: os.write(fd, b'def'))
    out['size'] = attempt('fstat', lambda: os.fstat(fd).st_size)
    attempt('fchmod', lambda: os.fchmod(fd, 0o600))
    attempt('fchown', lambda: os.fchown(fd, 1000, 1000))
    attempt('futimens', lambda: os.utime(fd, (1, 1)))
    st = attempt('fstat2', lambda: os.fstat(fd))
    out['after'] = [st.st_mode & 0o7777, st.st_uid, int(st.st_mtime)] if st else None
    attempt('ftruncate', lambda: os.ftruncate(fd, 2))
    out['read'] = attempt('pread', lambda: os.pread(fd, 10, 0).decode())
    attempt('close', lambda: os.close(fd))
    out['errors'] = errors
    out['listing'] = sorted(os.listdir(M))
elif case == 'lsdir':
    # A directory removed while a listing of it is open, then listed on; a new one of that name.
    os.makedirs(f'{M}/e')
    for i in range(3): write(f'{M}/e/x{i}', b'x')
    dfd = os.open(f'{M}/e', os.O_RDONLY | os.O_DIRECTORY)
    it = os.scandir(f'{M}/e')
    for i in range(3): os.unlink(f'{M}/e/x{i}')
    os.rmdir(f'{M}/e')
    recreate = sys.argv[3] == 'recreate'
    if recreate:
        os.makedirs(f'{M}/e')
        write(f'{M}/e/new', b'new')
    res = {}
    for step, fn in [('fstat', lambda: os.fstat(dfd).st_mode), ('readdir', lambda: sorted(e.name for e in it)),
                     ('fchmod', lambda: os.fchmod(dfd, 0o700)), ('fsync', lambda: os.fsync(dfd))]:
        try: res[step] = fn()
        except OSError as e: res[step] = f'error {e}'
    os.close(dfd)
    out.update(res)
    if recreate: out['new'] = sorted(os.listdir(f'{M}/e'))
sys.stdout.write(json.dumps(out) + '\n')
