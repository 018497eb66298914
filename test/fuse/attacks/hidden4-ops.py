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

def recover(d):
    # F is removed while open; the user renames its hidden name H1 to R (a rename like any other).
    f = os.path.join(d, 'F')
    fd = os.open(f, os.O_RDWR)
    os.pwrite(fd, b'written-after-open', 0)
    os.unlink(f)
    h1 = sys.stdin.readline().strip()
    out = {'h1': h1}
    try:
        os.rename(os.path.join(d, h1), os.path.join(d, 'R'))
        out['rename'] = 'ok'
    except OSError as e:
        out['rename'] = e.strerror
    os.close(fd)
    time.sleep(0.3)
    try:
        out['r_bytes'] = read_all(os.path.join(d, 'R'))
    except OSError as e:
        out['r_bytes'] = 'error ' + e.strerror
    print(json.dumps(out), flush=True)

if __name__ == '__main__':
    {'rehide': rehide, 'recover': recover}[sys.argv[1]](sys.argv[2])
