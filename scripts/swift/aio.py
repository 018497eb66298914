#!/usr/bin/python3
"""Swift all-in-one with the S3 API, for estuary's tests and benchmarks.

    /usr/bin/python3 scripts/swift/aio.py run DIR [--host IP] [--port N] [--workers N]
                                                  [--bucket NAME]... [--die-with-parent]
    /usr/bin/python3 scripts/swift/aio.py check DIR

`run` writes rings and configs into DIR (keeping any objects already stored there), starts
memcached and the account, container, object and proxy servers on 127.0.0.1 (or --host),
prints one line `SWIFT_READY {json}` with the endpoint and the servers' process ids, and stays
in the foreground until SIGTERM or SIGINT, when it stops them all. If any server dies (a test may
SIGKILL the proxy on purpose) it stops the others and exits with status 3.

Process hygiene: every server runs in its own session (Swift calls setsid), so a server is
stopped by signalling its process group. Each server and each of its forked workers asks the
kernel to SIGKILL it when its parent dies, so killing this launcher, even with SIGKILL, leaves
nothing listening. `check` says whether this machine can run it (exit 0) or why not (exit 1).

Run it with /usr/bin/python3: the Debian packages install the swift module for that Python only.
"""

import argparse
import ctypes
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

sys.dont_write_bytecode = True  # nothing written next to the script in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aio_config as cfg  # noqa: E402

PR_SET_PDEATHSIG = 1
START_TIMEOUT_S = 30
STOP_GRACE_S = 5
PORT_ATTEMPTS = 3
APT_HINT = ('apt-get install -y swift swift-proxy swift-object swift-container swift-account '
            'memcached')


def die_with_parent(sig=signal.SIGKILL):
    """Asks the kernel to send `sig` when the parent exits; exits now if it already has."""
    parent = os.getppid()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


# ---------------------------------------------------------------- check


def check(path, imports=True):
    """Returns None when Swift can run with its store under `path`, else the reason. `run` skips
    importing the servers' modules (half a second); a server missing one fails visibly anyway."""
    # Finding the top-level package runs none of it; the full check imports half of Swift.
    missing = [] if _importable('swift') else ['swift']
    if imports and not missing:
        missing = [m for m in ('swift.proxy.server', 'swift.obj.server', 'swift.account.server',
                               'swift.container.server', 'swift.common.middleware.s3api.s3api')
                   if not _importable(m)]
    if missing:
        return f'the Swift packages are not installed (no {missing[0]}): {APT_HINT}'
    if not _on_path('memcached'):
        return f'memcached is not installed: {APT_HINT}'
    return xattr_problem(path)


def _importable(module):
    import importlib.util
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _on_path(cmd):
    return any(os.access(os.path.join(d, cmd), os.X_OK)
               for d in os.environ.get('PATH', '/usr/bin').split(os.pathsep) + ['/usr/bin'])


def xattr_problem(path):
    """Swift keeps object metadata in user.* xattrs; some filesystems refuse them."""
    import tempfile
    os.makedirs(path, exist_ok=True)
    # A name of its own: checks run side by side, and one must not remove another's probe.
    fd, probe = tempfile.mkstemp(prefix='.xattr-probe-', dir=path)
    os.close(fd)
    try:
        os.setxattr(probe, 'user.estuary.probe', b'1')
        return None
    except OSError as err:
        return (f'the filesystem holding {path} does not take user.* extended attributes '
                f'({err.strerror}), which Swift stores object metadata in; put the directory '
                'on ext4 or xfs (for the tests: set TMPDIR to such a directory)')
    finally:
        try:
            os.unlink(probe)
        except OSError:
            pass


# ---------------------------------------------------------------- setup


def free_ports(host, names):
    """Ports the kernel hands out for port 0, all held at once so they differ from each other."""
    socks = []
    try:
        for _ in names:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((host, 0))
            socks.append(s)
        return {n: s.getsockname()[1] for n, s in zip(names, socks)}
    finally:
        for s in socks:
            s.close()


def swift_version():
    from importlib.metadata import PackageNotFoundError, version
    try:
        return f'OpenStack Swift {version("swift")}'
    except PackageNotFoundError:
        return 'OpenStack Swift'


def port_free(host, port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        # As Swift binds: connections of a server just killed, in TIME_WAIT, don't count.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
            return True
        except OSError:
            return False


def write_setup(layout):
    """Configs, swift.conf and the ring devices; the proxy builds the rings from those."""
    for d in (layout.etc, layout.logs, os.path.join(layout.devices, cfg.DEVICE)):
        os.makedirs(d, exist_ok=True)
    _write(os.path.join(layout.etc, 'swift.conf'), cfg.swift_conf())
    for server in ('account', 'container', 'object'):
        _write(layout.conf_path(server), cfg.storage_conf(layout, server))
    _write(layout.conf_path('proxy'), cfg.proxy_conf(layout))
    devices = {s: [layout.host, layout.ports[s]] for s in ('account', 'container', 'object')}
    _write(os.path.join(layout.etc, RING_DEVICES), json.dumps(devices))


# Only the proxy reads rings, so it builds them itself before loading: the launcher then never
# imports Swift (about a second of CPU), and the storage servers start without waiting for rings.
RING_DEVICES = 'ring-devices.json'


def build_rings(swift_dir):
    from swift.common.ring import RingBuilder

    with open(os.path.join(swift_dir, RING_DEVICES)) as f:
        devices = json.load(f)
    for server, (host, port) in devices.items():
        builder = RingBuilder(cfg.PART_POWER, cfg.REPLICAS, 1)
        builder.add_dev({'id': 0, 'region': 1, 'zone': 1, 'ip': host, 'port': port,
                         'device': cfg.DEVICE, 'weight': 1.0})
        builder.rebalance()
        builder.get_ring().save(os.path.join(swift_dir, f'{server}.ring.gz'))


def _write(path, text):
    with open(path, 'w') as f:
        f.write(text)


# ---------------------------------------------------------------- processes


class SyslogSink:
    """Receives the servers' syslog datagrams and appends them to log/swift.log."""

    def __init__(self, host, path):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((host, 0))
        self.port = self.sock.getsockname()[1]
        self.file = open(path, 'ab', buffering=0)
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        while True:
            try:
                data = self.sock.recv(65536)
            except OSError:
                return
            self.file.write(data.rstrip(b'\0\n') + b'\n')


# Straight to the servers: an http_proxy in the environment must not see loopback requests.
HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def spawn(layout, name, argv):
    me = os.path.abspath(__file__)
    # Through `guard` so the child dies with this launcher; a session of its own so a process
    # group signal reaches exactly it and its workers (Swift servers also call setsid).
    # Every address is numeric, so eventlet's green DNS resolver (dnspython, about a quarter of a
    # second of imports per process) is never needed.
    env = {**os.environ, 'EVENTLET_NO_GREENDNS': 'yes'}
    with open(os.path.join(layout.logs, f'{name}.out'), 'ab') as out:
        return subprocess.Popen([sys.executable, me, 'guard', *argv], stdout=out, stderr=out,
                                stdin=subprocess.DEVNULL, start_new_session=True, env=env)


def start_all(layout):
    procs = {}
    memcached = ['memcached', '-l', layout.host, '-p', str(layout.ports['memcached']), '-U', '0',
                 '-m', '64']
    if os.geteuid() == 0:
        memcached += ['-u', 'root']
    procs['memcached'] = spawn(layout, 'memcached', memcached)
    for server in cfg.SERVERS:
        argv = ['serve', server, layout.conf_path(server), layout.etc]
        procs[server] = spawn(layout, server, argv)
    return procs


def wait_ready(layout, procs):
    """None once every server answers, else a description of what failed."""
    deadline = time.monotonic() + START_TIMEOUT_S
    pending = set(procs)
    while pending:
        for name in sorted(pending):
            if procs[name].poll() is not None:
                return f'{name} exited with status {procs[name].returncode}: {tail(layout, name)}'
            if _answers(layout.host, name, layout.ports[name]):
                pending.discard(name)
        if time.monotonic() > deadline:
            return f'not ready after {START_TIMEOUT_S} s: {", ".join(sorted(pending))}'
        time.sleep(0.05)
    return None


def _answers(host, name, port):
    # A refused connect is cheap; the HTTP request only once something listens.
    try:
        socket.create_connection((host, port), timeout=0.5).close()
    except OSError:
        return False
    if name == 'memcached':
        return True
    try:
        with HTTP.open(f'http://{host}:{port}/healthcheck', timeout=1) as r:
            return r.status == 200
    except OSError:
        return False


def tail(layout, name, limit=1500):
    try:
        with open(os.path.join(layout.logs, f'{name}.out'), 'rb') as f:
            text = f.read().decode('utf-8', 'replace').strip()
    except OSError:
        return '(no output)'
    return text[-limit:] or '(no output)'


def stop_all(procs):
    """SIGTERM to every server's group at once (each takes about a second to wind down), then
    SIGKILL whatever is left after the grace period, stray workers of a dead parent included."""
    for p in procs.values():
        if p.poll() is None:
            _signal_group(p, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_S
    for p in procs.values():
        try:
            p.wait(max(0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        _signal_group(p, signal.SIGKILL)
        p.wait()


def _signal_group(p, sig):
    if p is None:
        return
    try:
        os.killpg(p.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


# S3's rule for bucket names (s3api enforces it): 3-63 lowercase letters, digits, dots, hyphens.
BUCKET_NAME = re.compile(r'^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$')


def bad_bucket(name):
    """Why `name` is no S3 bucket name, or None. A Swift container made under such a name
    would exist but be unreachable through the S3 API."""
    if not BUCKET_NAME.match(name) or '..' in name:
        return f'{name!r} is not a valid S3 bucket name (3-63 of a-z, 0-9, ".", "-")'
    return None


def create_buckets(endpoint, buckets):
    """S3 buckets are Swift containers in the tempauth user's account."""
    if not buckets:
        return
    req = urllib.request.Request(f'{endpoint}/auth/v1.0', headers={
        'X-Auth-User': cfg.ACCOUNT_USER, 'X-Auth-Key': cfg.ACCOUNT_KEY})
    with HTTP.open(req, timeout=10) as r:
        url, token = r.headers['X-Storage-Url'], r.headers['X-Auth-Token']
    for b in buckets:
        put = urllib.request.Request(f'{url}/{b}', method='PUT', headers={'X-Auth-Token': token})
        HTTP.open(put, timeout=10).close()


# ---------------------------------------------------------------- commands


def run(args):
    root = os.path.abspath(args.dir)
    problem = next(filter(None, map(bad_bucket, args.bucket)), None) or check(root, imports=False)
    if problem:
        print(f'swift-aio: cannot start: {problem}', file=sys.stderr)
        return 1
    stopping = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda s, _f: stopping.append(s))
    if args.die_with_parent:
        die_with_parent(signal.SIGTERM)
    os.makedirs(os.path.join(root, 'log'), exist_ok=True)
    sink = SyslogSink(args.host, os.path.join(root, 'log', 'swift.log'))
    started = time.monotonic()
    procs, layout, error = start_with_retries(root, sink.port, args)
    if error:
        print(f'swift-aio: could not start Swift in {root}: {error}', file=sys.stderr)
        return 1
    endpoint = f'http://{layout.host}:{layout.ports["proxy"]}'
    create_buckets(endpoint, args.bucket)
    info = {
        'endpoint': endpoint,
        'port': layout.ports['proxy'],
        'accessKeyId': cfg.ACCOUNT_USER,
        'secretAccessKey': cfg.ACCOUNT_KEY,
        'region': cfg.REGION,
        'version': swift_version(),
        'dataDir': root,
        'pids': {name: p.pid for name, p in procs.items()},
        'startSeconds': round(time.monotonic() - started, 2),
    }
    print('SWIFT_READY ' + json.dumps(info), flush=True)
    print(f'swift-aio: S3 endpoint {endpoint} (access key {cfg.ACCOUNT_USER}, secret '
          f'{cfg.ACCOUNT_KEY}, region {cfg.REGION}); logs in {root}/log; SIGTERM or Ctrl-C stops',
          file=sys.stderr, flush=True)
    return supervise(procs, stopping)


def start_with_retries(root, log_port, args):
    """Starts everything; a port taken by someone else in the meantime means new ports."""
    import pwd
    if args.port and not port_free(args.host, args.port):
        return None, None, f'{args.host}:{args.port} is already in use; choose another --port'
    error = None
    for _ in range(PORT_ATTEMPTS):
        ports = free_ports(args.host, ['memcached', *cfg.SERVERS])
        if args.port:
            ports['proxy'] = args.port
        ports['log'] = log_port
        layout = cfg.Layout(root=root, user=pwd.getpwuid(os.geteuid()).pw_name, ports=ports,
                            host=args.host, workers=args.workers, log_level=args.log_level)
        write_setup(layout)
        procs = start_all(layout)
        error = wait_ready(layout, procs)
        if error is None:
            return procs, layout, None
        stop_all(procs)
        taken = 'in use' in error or 'Could not bind' in error
        if not taken or (args.port and error.startswith('proxy')):
            break
    return None, None, error


def supervise(procs, stopping):
    while not stopping:
        dead = [n for n, p in procs.items() if p.poll() is not None]
        if dead:
            name = dead[0]
            print(f'swift-aio: {name} (pid {procs[name].pid}) exited with status '
                  f'{procs[name].returncode}; stopping the rest', file=sys.stderr, flush=True)
            stop_all(procs)
            return 3
        time.sleep(0.1)
    stop_all(procs)
    return 0


def serve(args):
    """One Swift server, reading swift.conf from our own directory instead of /etc/swift."""
    die_with_parent()
    from swift.common import utils, wsgi

    utils.set_swift_dir(args.swift_dir)
    if args.server == 'proxy':
        build_rings(args.swift_dir)
    after_fork = wsgi.WorkersStrategy.post_fork_hook

    def post_fork_hook(self):
        die_with_parent()  # a worker outlives a SIGKILLed parent otherwise, still listening
        after_fork(self)

    wsgi.WorkersStrategy.post_fork_hook = post_fork_hook
    kwargs = {}
    if args.server == 'object':
        from swift.obj import server
        kwargs['global_conf_callback'] = server.global_conf_callback
    return wsgi.run_wsgi(args.conf, f'{args.server}-server', **kwargs)


def guard(argv):
    """Runs argv (a server, or memcached) so that it dies when the launcher dies."""
    if argv and argv[0] == 'serve':
        return main(argv)
    die_with_parent()
    os.execvp(argv[0], argv)


def main(argv):
    if argv and argv[0] == 'guard':
        return guard(argv[1:])
    p = argparse.ArgumentParser(prog='aio.py', description=__doc__.split('\n\n')[0])
    sub = p.add_subparsers(dest='cmd', required=True)
    r = sub.add_parser('run', help='start Swift in DIR and stay in the foreground')
    r.add_argument('dir')
    r.add_argument('--host', default='127.0.0.1', help='address every server listens on (IPv4)')
    r.add_argument('--port', type=int, default=0, help='proxy (S3) port; default: a free one')
    r.add_argument('--workers', type=int, default=2, help='proxy and object server workers')
    r.add_argument('--bucket', action='append', default=[], help='create this bucket (repeatable)')
    r.add_argument('--log-level', default='INFO', choices=['DEBUG', 'INFO', 'WARNING', 'ERROR'])
    r.add_argument('--die-with-parent', action='store_true',
                   help='stop when the process that started this one exits (for test harnesses)')
    c = sub.add_parser('check', help='exit 0 if Swift can run with its store in DIR')
    c.add_argument('dir')
    s = sub.add_parser('serve', help=argparse.SUPPRESS)
    s.add_argument('server', choices=cfg.SERVERS)
    s.add_argument('conf')
    s.add_argument('swift_dir')
    args = p.parse_args(argv)
    if args.cmd == 'check':
        problem = check(args.dir)
        print(problem or 'ok', file=sys.stderr if problem else sys.stdout)
        return 1 if problem else 0
    return serve(args) if args.cmd == 'serve' else run(args)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
