#!/usr/bin/env python3
# Read patterns against files on an estuary mount, each checked byte for byte against the true
# content (the file of the same name in TRUTH_DIR). Prints one line per pattern, "ok <pattern>"
# or "BAD <pattern>: <what>", and exits 1 if any was bad.
#
# usage: mount-read-patterns.py MOUNT_DIR TRUTH_DIR KIND:NAME...

import os
import random
import sys
import threading
import time

mount, truth = sys.argv[1], sys.argv[2]
patterns = sys.argv[3:]
size = 0


def content(name):
    global size
    with open(f"{truth}/{name}", "rb") as f:
        data = f.read()
    size = len(data)
    return data


bad = []


def check(name, got, want, what):
    if got != want:
        at = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), min(len(got), len(want)))
        bad.append(f"{name}: {what}: {len(got)} bytes, want {len(want)}, first difference at {at}")
        return False
    return True


def reverse(name):
    # From the end to the start in 128 KiB reads.
    want = content(name)
    fd = os.open(f"{mount}/{name}", os.O_RDONLY)
    step = 128 * 1024
    off = (size // step) * step
    while off >= 0:
        if not check(name, os.pread(fd, step, off), want[off:off + step], f"read at {off}"):
            break
        off -= step
    os.close(fd)


def eof(name):
    want = content(name)
    fd = os.open(f"{mount}/{name}", os.O_RDONLY)
    for off, n in [(size - 1000, 128 * 1024), (size - 1, 1), (size, 10), (size + 5000, 4096), (size - 4096 * 3 - 7, 65536)]:
        if not check(name, os.pread(fd, n, off), want[off:off + n], f"read of {n} at {off}"):
            break
    os.close(fd)


def threads(name):
    # Eight threads, one descriptor, random offsets and lengths.
    want = content(name)
    fd = os.open(f"{mount}/{name}", os.O_RDONLY)

    def run(seed):
        r = random.Random(seed)
        for _ in range(60):
            off = r.randrange(0, size)
            n = r.choice([1, 4096, 65536, 131072, 300000, 1 << 20])
            if not check(name, os.pread(fd, n, off), want[off:off + n], f"thread read of {n} at {off}"):
                return

    ts = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    os.close(fd)


def readers(name):
    # Eight descriptors of one file, each reading its own eighth in order, side by side.
    want = content(name)
    part = size // 8

    def run(i):
        fd = os.open(f"{mount}/{name}", os.O_RDONLY)
        off, end = i * part, (i + 1) * part if i < 7 else size
        while off < end:
            n = min(128 * 1024, end - off)
            if not check(name, os.pread(fd, n, off), want[off:off + n], f"reader {i} at {off}"):
                break
            off += n
        os.close(fd)

    ts = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def pause(name):
    # Read 3 MiB, stop for longer than any server keeps an idle connection (s3rver: 5 s), go on.
    want = content(name)
    with open(f"{mount}/{name}", "rb") as f:
        a = f.read(3 << 20)
        time.sleep(6.5)
        b = f.read()
    check(name, a + b, want, "whole file read with a pause")


def strided(name):
    # Every other 64 KiB block, forwards: each read skips what readahead fetched.
    want = content(name)
    fd = os.open(f"{mount}/{name}", os.O_RDONLY)
    off = 0
    while off < size:
        if not check(name, os.pread(fd, 65536, off), want[off:off + 65536], f"read at {off}"):
            break
        off += 3 * 65536 + 4096
    os.close(fd)


for p in patterns:
    kind, name = p.split(":")
    before = len(bad)
    globals()[kind](name)
    print(("ok " if len(bad) == before else "BAD ") + p + ("" if len(bad) == before else ": " + bad[before]), flush=True)
sys.exit(1 if bad else 0)
