# Operations on a mount for hidden4-*.test.ts: each holds descriptors open across the steps that
# make libfuse hide a file, and prints one JSON line of what it saw.
import json, os, sys, time

def read_all(path):
    with open(path, 'rb') as f:
        return f.read().decode()

def rehide(d):
    # F is removed while open (libfuse hides it as H1); the user then renames G onto H1.
    f, g = os.path.join(d, 'F'), os.path.join(d, 'G')
    fd = os.open(f, os.O_RDONLY)
    os.unlink(f)
    h1 = sys.stdin.readline().strip()  # the test reads H1 from the mount's log
    out = {'h1': h1}
    try:
        os.rename(g, os.path.join(d, h1))
        out['rename'] = 'ok'
    except OSError as e:
        out['rename'] = e.strerror
    try:
        out['h1_bytes'] = read_all(os.path.join(d, h1))
    except OSError as e:
        out['h1_bytes'] = 'error ' + e.strerror
    out['fd_bytes'] = os.pread(fd, 100, 0).decode()
    try:
        os.unlink(os.path.join(d, h1))
        out['rm'] = 'ok'
    except OSError as e:
        out['rm'] = e.strerror
    os.close(fd)
    time.sleep(0.3)
    print(json.dumps(out), flush=True)

def recover(d, ro=False):
    # F is removed while open; the user renames its hidden name H1 to R (a rename like any other).
    f = os.path.join(d, 'F')
    fd = os.open(f, os.O_RDONLY if ro else os.O_RDWR)
    if not ro:
        os.pwrite(fd, b'written-after-open', 0)
    os.unlink(f)
    h1 = sys.stdin.readline().strip()
    out = {'h1': h1}
    try:
        os.rename(os.path.join(d, h1), os.path.join(d, 'R'))
        out['rename'] = 'ok'
    except OSError as e:
        out['rename'] = e.strerror
    out['fd_bytes'] = os.pread(fd, 100, 0).decode()
    os.close(fd)
    time.sleep(0.3)
    try:
        out['r_bytes'] = read_all(os.path.join(d, 'R'))
    except OSError as e:
        out['r_bytes'] = 'error ' + e.strerror
    print(json.dumps(out), flush=True)

def reuse(d):
    # F is removed while open, then its directory; after the last close the user makes the
    # directory again and a file of their own under F's hidden name, then removes it.
    f = os.path.join(d, 'F')
    fd = os.open(f, os.O_RDONLY)
    os.unlink(f)
    h1 = sys.stdin.readline().strip()
    os.rmdir(d)
    os.close(fd)
    time.sleep(0.3)
    os.mkdir(d)
    with open(os.path.join(d, h1), 'w') as u:
        u.write('user-file')
    out = {'h1': h1, 'bytes': read_all(os.path.join(d, h1))}
    try:
        os.unlink(os.path.join(d, h1))
        out['rm'] = 'ok'
    except OSError as e:
        out['rm'] = e.strerror
    out['after_rm'] = os.listdir(d)
    print(json.dumps(out), flush=True)

if __name__ == '__main__' and sys.argv[1] in ('rehide', 'recover', 'reuse', 'recover_ro', 'recover_over'):
    {'rehide': rehide, 'recover': recover, 'reuse': reuse, 'recover_ro': lambda d: recover(d, True), 'recover_over': recover}[sys.argv[1]](sys.argv[2])

def over(root, src_dir, dst_dir):
    # T (in dst_dir) is open for writing and reading while S (in src_dir) is renamed over it.
    s, t = os.path.join(root, src_dir, 'S'), os.path.join(root, dst_dir, 'T')
    fd = os.open(t, os.O_RDWR)
    os.pwrite(fd, b'T-rewritten', 0)
    out = {}
    os.rename(s, t)
    out['t_bytes'] = read_all(t)
    out['fd_bytes'] = os.pread(fd, 100, 0).decode()
    os.pwrite(fd, b'more', 11)
    os.close(fd)
    time.sleep(0.3)
    out['t_after_close'] = read_all(t)
    print(json.dumps(out), flush=True)

def user_hidden(root, n):
    # In each of n directories, at once: O is removed while open (libfuse hides it) and U, also
    # open, is renamed by the user to a .fuse_hidden name of the same form.
    import threading
    out = {}
    def one(i):
        d = os.path.join(root, 'p%d' % i)
        fo = os.open(os.path.join(d, 'O'), os.O_RDWR)
        fu = os.open(os.path.join(d, 'U'), os.O_RDONLY)
        name = '.fuse_hidden%016x' % (0xabc0 + i)
        try:
            os.stat(os.path.join(d, name))
        except OSError:
            pass
        os.pwrite(fo, b'O-more', 0)
        os.unlink(os.path.join(d, 'O'))
        os.rename(os.path.join(d, 'U'), os.path.join(d, name))
        out[i] = [os.pread(fo, 100, 0).decode(), os.pread(fu, 100, 0).decode()]
        os.close(fo)
        os.close(fu)
    ts = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in ts: t.start()
    for t in ts: t.join()
    time.sleep(0.3)
    print(json.dumps(out), flush=True)

def link(root):
    try:
        os.link(os.path.join(root, 'L'), os.path.join(root, 'L2'))
        print(json.dumps({'link': 'ok'}))
    except OSError as e:
        print(json.dumps({'link': e.strerror}))

if __name__ == '__main__' and sys.argv[1] in ('over', 'user_hidden', 'link'):
    f = {'over': over, 'user_hidden': user_hidden, 'link': link}[sys.argv[1]]
    f(*[int(a) if a.isdigit() else a for a in sys.argv[2:]])

def hold(path, how, data):
    # Opens path (and writes data at 0 unless it is '-'), then: 'rm' removes it (libfuse hides
    # it), or a .fuse_hidden name renames it; prints what it did and holds the descriptor until killed.
    fd = os.open(path, os.O_RDONLY if data == '-' else os.O_RDWR)
    if data != '-':
        os.pwrite(fd, data.encode(), 0)
    out = {}
    try:
        if how == 'rm':
            os.unlink(path)
        else:
            os.rename(path, os.path.join(os.path.dirname(path), how))
        out['op'] = 'ok'
    except OSError as e:
        out['op'] = e.strerror
    out['fd_bytes'] = os.pread(fd, 100, 0).decode()
    print(json.dumps(out), flush=True)
    time.sleep(60)

if __name__ == '__main__' and sys.argv[1] == 'hold':
    hold(sys.argv[2], sys.argv[3], sys.argv[4])

def same_dir(root, n):
    # In one directory, from n threads at once: O<i> is removed while open and being written,
    # U<i> (open for reading) is renamed by the user to .fuse_hidden<16 hex>, and V<i>, open, is
    # replaced by a rename of W<i> over it.
    import threading
    d = os.path.join(root, 'one')
    out = {}
    def one(i):
        p = lambda n: os.path.join(d, '%s%d' % (n, i))
        fo = os.open(p('O'), os.O_RDWR)
        fu = os.open(p('U'), os.O_RDONLY)
        fv = os.open(p('V'), os.O_RDONLY)
        os.pwrite(fo, b'O-more', 0)
        os.unlink(p('O'))
        os.rename(p('U'), os.path.join(d, '.fuse_hidden%016x' % (0xbeef00 + i)))
        os.rename(p('W'), p('V'))
        out[i] = [os.pread(fo, 100, 0).decode(), os.pread(fu, 100, 0).decode(), os.pread(fv, 100, 0).decode()]
        for f in (fo, fu, fv): os.close(f)
    ts = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in ts: t.start()
    for t in ts: t.join()
    time.sleep(0.3)
    print(json.dumps(out), flush=True)

def create_on_hidden(d):
    # F is removed while open; the user then writes a new file of their own under F's hidden name.
    f = os.path.join(d, 'F')
    fd = os.open(f, os.O_RDONLY)
    os.unlink(f)
    h1 = sys.stdin.readline().strip()
    out = {'h1': h1}
    try:
        with open(os.path.join(d, h1), 'w') as u:
            u.write('user-new')
        out['create'] = 'ok'
    except OSError as e:
        out['create'] = e.strerror
    out['fd_bytes'] = os.pread(fd, 100, 0).decode()
    os.close(fd)
    time.sleep(0.3)
    try:
        out['after_close'] = read_all(os.path.join(d, h1))
    except OSError as e:
        out['after_close'] = 'error ' + e.strerror
    print(json.dumps(out), flush=True)

if __name__ == '__main__' and sys.argv[1] == 'same_dir':
    same_dir(sys.argv[2], int(sys.argv[3]))
if __name__ == '__main__' and sys.argv[1] == 'create_on_hidden':
    create_on_hidden(sys.argv[2])

def dir_move(root):
    # F in d is removed while open for writing; then d is renamed to d2. The descriptor keeps
    # working as a local file's does: fstat, write, read, close.
    fd = os.open(os.path.join(root, 'd', 'F'), os.O_RDWR)
    os.pwrite(fd, b'before', 0)
    os.unlink(os.path.join(root, 'd', 'F'))
    os.rename(os.path.join(root, 'd'), os.path.join(root, 'd2'))
    out = {}
    for step, fn in (('fstat', lambda: os.fstat(fd).st_size), ('write', lambda: os.pwrite(fd, b'-after', 6)),
                     ('read', lambda: os.pread(fd, 100, 0).decode()), ('fchmod', lambda: os.fchmod(fd, 0o600)),
                     ('close', lambda: os.close(fd))):
        try:
            out[step] = fn()
        except OSError as e:
            out[step] = e.strerror
    time.sleep(0.3)
    out['d2'] = sorted(os.listdir(os.path.join(root, 'd2')))
    print(json.dumps(out), flush=True)

if __name__ == '__main__' and sys.argv[1] == 'dir_move':
    dir_move(sys.argv[2])

def over_fails(root):
    # T is open for reading while S is renamed over it; the store refuses the copy. The rename
    # fails; T must be as it was (rename(2) is all or nothing).
    s, t = os.path.join(root, 'S'), os.path.join(root, 'T')
    fd = os.open(t, os.O_RDONLY)
    out = {}
    try:
        os.rename(s, t)
        out['rename'] = 'ok'
    except OSError as e:
        out['rename'] = e.strerror
    out['fd_bytes'] = os.pread(fd, 100, 0).decode()
    os.close(fd)
    time.sleep(0.3)
    for n, p in (('t', t), ('s', s)):
        try:
            out[n] = read_all(p)
        except OSError as e:
            out[n] = 'error ' + e.strerror
    print(json.dumps(out), flush=True)

if __name__ == '__main__' and sys.argv[1] == 'over_fails':
    over_fails(sys.argv[2])
