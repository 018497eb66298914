#!/usr/bin/env python3
"""Sequences of system calls on a mounted directory for the hidden-file attacks.

Each command prints lines `STEP <name>` when it reaches a point where the test may act (and then
waits for the file <gate>.<name> to appear), and one last line `RESULT <json>`. Bytes are
deterministic (seeded), so the test can compute every SHA-256 itself.
"""

import hashlib
import json
import os
import random
import sys
import time


def data(seed: int, n: int) -> bytes:
    return random.Random(seed).randbytes(n)


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


GATE = os.environ.get('GATE', '')


def step(name: str) -> None:
    print(f'STEP {name}', flush=True)
    if not GATE:
        return
    path = f'{GATE}.{name}'
    deadline = time.time() + 50
    while not os.path.exists(path):
        if time.time() > deadline:
            raise SystemExit(f'gate {path} never opened')
        time.sleep(0.05)


def errno_of(fn):
    try:
        fn()
        return None
    except OSError as e:
        return e.errno and os.strerror(e.errno)


def pread_all(fd: int, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        b = os.pread(fd, min(1 << 20, n - len(out)), len(out))
        if not b:
            break
        out += b
    return bytes(out)


def write_all(fd: int, b: bytes, off: int) -> None:
    view = memoryview(b)
    at = 0
    while at < len(b):
        at += os.pwrite(fd, view[at : at + (1 << 20)], off + at)


def tmpfile(path: str, before: int, after: int) -> dict:
    """mkstemp then unlink: write, unlink, write more, read back, ftruncate, write, close."""
    res: dict = {}
    a, b = data(1, before), data(2, after)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    write_all(fd, a, 0)
    os.unlink(path)
    res['exists_after_unlink'] = os.path.exists(path)
    step('unlinked')
    res['write_err'] = errno_of(lambda: write_all(fd, b, before))
    whole = a + b
    res['fstat_size'] = os.fstat(fd).st_size
    got = None
    try:
        got = pread_all(fd, len(whole))
        res['read_err'] = None
    except OSError as e:
        res['read_err'] = os.strerror(e.errno)
    res['read_ok'] = got == whole
    half = len(whole) // 2
    res['truncate_err'] = errno_of(lambda: os.ftruncate(fd, half))
    tail = data(3, 4096)
    res['write2_err'] = errno_of(lambda: write_all(fd, tail, half))
    try:
        res['read2_ok'] = pread_all(fd, half + 4096) == whole[:half] + tail
    except OSError as e:
        res['read2_ok'] = os.strerror(e.errno)
    res['fsync_err'] = errno_of(lambda: os.fsync(fd))
    step('before-close')
    res['close_err'] = errno_of(lambda: os.close(fd))
    res['exists_after_close'] = os.path.exists(path)
    return res


def recreate(path: str, size: int) -> dict:
    """An unlinked descriptor still open while the name is recreated: the old one must not touch it."""
    res: dict = {}
    fd1 = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    write_all(fd1, data(10, size), 0)
    os.fsync(fd1)
    os.unlink(path)
    new = data(11, size // 2 + 7)
    fd2 = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o640)
    write_all(fd2, new, 0)
    os.close(fd2)
    res['new_sha'] = sha(new)
    # The old descriptor goes on: writes, fsync, metadata, truncate, close.
    res['old_write_err'] = errno_of(lambda: write_all(fd1, data(12, 3000), size))
    res['old_fsync_err'] = errno_of(lambda: os.fsync(fd1))
    res['old_fchmod_err'] = errno_of(lambda: os.fchmod(fd1, 0o600))
    res['old_futimes_err'] = errno_of(lambda: os.utime(fd1, (1000000000, 1000000000)))
    res['old_ftruncate_err'] = errno_of(lambda: os.ftruncate(fd1, 5))
    res['old_fsync2_err'] = errno_of(lambda: os.fsync(fd1))
    res['old_close_err'] = errno_of(lambda: os.close(fd1))
    with open(path, 'rb') as f:
        res['read_sha'] = sha(f.read())
    st = os.stat(path)
    res['mode'] = oct(st.st_mode & 0o7777)
    res['mtime'] = int(st.st_mtime)
    return res


def renamed_then_removed(path_a: str, path_b: str, size: int) -> dict:
    """An existing file opened and rewritten, renamed away while dirty, then removed while open."""
    res: dict = {}
    fd = os.open(path_a, os.O_RDWR | os.O_TRUNC)
    write_all(fd, data(20, size), 0)
    os.rename(path_a, path_b)
    os.unlink(path_b)
    res['a_visible'] = os.path.exists(path_a)
    res['b_visible'] = os.path.exists(path_b)
    step('removed')
    res['read_ok'] = errno_of(lambda: pread_all(fd, size)) is None
    res['close_err'] = errno_of(lambda: os.close(fd))
    return res


def hold_open(path: str, mode: str) -> dict:
    """Holds `path` open (for reading or writing) until the gate `release` opens."""
    flags = os.O_RDONLY if mode == 'r' else os.O_RDWR
    fd = os.open(path, flags)
    step('open')
    step('release')
    res = {}
    if mode == 'w':
        # Removed while open: writes are taken (SEMANTICS "unlink."), whatever the disk can keep.
        res['write_err'] = errno_of(lambda: write_all(fd, data(30, 1000), 0))
    res['close_err'] = errno_of(lambda: os.close(fd))
    return res


def writer(path: str, chunks: int, chunk: int, seed: int) -> dict:
    """Writes `chunks` chunks in order, with a gate after the first one, then reads back and closes."""
    res: dict = {}
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    whole = data(seed, chunks * chunk)
    errs = []
    for i in range(chunks):
        e = errno_of(lambda: write_all(fd, whole[i * chunk : (i + 1) * chunk], i * chunk))
        if e:
            errs.append(e)
        if i == 0:
            step('first')
    res['write_errs'] = errs
    try:
        res['read_ok'] = pread_all(fd, len(whole)) == whole
    except OSError as e:
        res['read_ok'] = os.strerror(e.errno)
    step('before-close')
    res['close_err'] = errno_of(lambda: os.close(fd))
    res['sha'] = sha(whole)
    return res


def append_after_flush(path: str, first: int, more: int) -> dict:
    """Writes a stream, fsyncs (published without a local copy past --staging-limit), then appends."""
    res: dict = {}
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    a = data(40, first)
    write_all(fd, a, 0)
    res['fsync_err'] = errno_of(lambda: os.fsync(fd))
    res['first_sha'] = sha(a)
    step('flushed')
    b = data(41, more)
    res['append_err'] = errno_of(lambda: write_all(fd, b, first))
    res['fsync2_err'] = errno_of(lambda: os.fsync(fd))
    res['close_err'] = errno_of(lambda: os.close(fd))
    res['whole_sha'] = sha(a + b)
    return res


def rename_streaming(path_a: str, path_b: str, first: int, more: int) -> dict:
    """A stream past --staging-limit renamed while open, then written on and closed."""
    res: dict = {}
    fd = os.open(path_a, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    a = data(50, first)
    write_all(fd, a, 0)
    res['rename_err'] = errno_of(lambda: os.rename(path_a, path_b))
    step('renamed')
    b = data(51, more)
    res['append_err'] = errno_of(lambda: write_all(fd, b, first))
    res['close_err'] = errno_of(lambda: os.close(fd))
    res['whole_sha'] = sha(a + b)
    return res


def append_existing(path: str, more: int) -> dict:
    """O_APPEND to an existing object (the cache disk too small for its copy), with a gate first."""
    res: dict = {}
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    size = os.fstat(fd).st_size
    res['size_at_open'] = size
    step('opened')
    b = data(60, more)
    res['append_err'] = errno_of(lambda: os.write(fd, b))
    res['close_err'] = errno_of(lambda: os.close(fd))
    res['more_sha'] = sha(b)
    return res


def two_and_reader(path: str, size: int) -> dict:
    """Two writable descriptors and a reader of one existing file; the file is removed meanwhile."""
    res: dict = {}
    w1 = os.open(path, os.O_RDWR)
    w2 = os.open(path, os.O_RDWR)
    rd = os.open(path, os.O_RDONLY)
    old = pread_all(rd, size)
    res['old_sha'] = sha(old)
    patch = data(90, 4096)
    write_all(w1, patch, 100)
    step('written')
    os.unlink(path)
    res['exists_after_unlink'] = os.path.exists(path)
    more = data(91, 8192)
    res['w2_write_err'] = errno_of(lambda: write_all(w2, more, size))
    expect = bytearray(old)
    expect[100 : 100 + len(patch)] = patch
    expect += more
    try:
        res['w1_sees_all'] = pread_all(w1, len(expect)) == bytes(expect)
    except OSError as e:
        res['w1_sees_all'] = os.strerror(e.errno)
    try:
        got = pread_all(rd, len(expect))
        res['reader_sees'] = 'all' if got == bytes(expect) else 'old' if got == old else 'other'
    except OSError as e:
        res['reader_sees'] = os.strerror(e.errno)
    res['close_errs'] = [errno_of(lambda: os.close(fd)) for fd in (w1, rd, w2)]
    return res


def race(path: str, rounds: int, size: int) -> dict:
    """close() of a fresh file and unlink() of it from another thread at the same moment."""
    import threading

    res: dict = {'unlink_errs': [], 'close_errs': []}
    for i in range(rounds):
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        write_all(fd, data(100 + i, size), 0)
        errs: dict = {}
        t = threading.Thread(target=lambda: errs.__setitem__('u', errno_of(lambda: os.unlink(path))))
        t.start()
        errs['c'] = errno_of(lambda: os.close(fd))
        t.join()
        res['unlink_errs'].append(errs['u'])
        res['close_errs'].append(errs['c'])
    res['exists'] = os.path.exists(path)
    return res


COMMANDS = {
    'two-and-reader': lambda a: two_and_reader(a[0], int(a[1])),
    'race': lambda a: race(a[0], int(a[1]), int(a[2])),
    'tmpfile': lambda a: tmpfile(a[0], int(a[1]), int(a[2])),
    'recreate': lambda a: recreate(a[0], int(a[1])),
    'renamed-then-removed': lambda a: renamed_then_removed(a[0], a[1], int(a[2])),
    'hold-open': lambda a: hold_open(a[0], a[1]),
    'writer': lambda a: writer(a[0], int(a[1]), int(a[2]), int(a[3])),
    'append-after-flush': lambda a: append_after_flush(a[0], int(a[1]), int(a[2])),
    'rename-streaming': lambda a: rename_streaming(a[0], a[1], int(a[2]), int(a[3])),
    'append-existing': lambda a: append_existing(a[0], int(a[1])),
}

if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1] == 'data':
        sys.stdout.buffer.write(data(int(sys.argv[2]), int(sys.argv[3])))
        sys.exit(0)
    out = COMMANDS[sys.argv[1]](sys.argv[2:])
    print('RESULT ' + json.dumps(out), flush=True)
