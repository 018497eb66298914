// Shared by the rmopen-* attacks: a relay in front of an S3 server that refuses or delays chosen
// requests, and a python process that holds descriptors on a mount and runs one syscall at a time.

import { spawn } from 'node:child_process';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { onTeardown, trackPid, untrackPid } from '../../helpers/cleanup.ts';

export const O_RDWR = 0o2;
export const O_RDWR_CREAT_TRUNC = 0o2 | 0o100 | 0o1000;

export const ACCESS_DENIED = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied.</Message></Error>`;

export type Verdict = 'pass' | { status: number; body: string } | { lateMs: number };

/** A relay in front of MinIO that refuses or delays chosen requests (loopback only). */
export async function startProxy(
  origin: string,
  decide: (method: string, path: string, headers: Record<string, unknown>, query: URLSearchParams) => Verdict,
): Promise<string> {
  const to = new URL(origin);
  const server = createServer((req, res) => {
    const [path, query] = (req.url ?? '/').split('?');
    const v = decide(req.method ?? '', path!, req.headers, new URLSearchParams(query ?? ''));
    if (v !== 'pass' && 'status' in v) {
      req.resume();
      req.on('end', () => {
        res.writeHead(v.status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(v.body) });
        res.end(v.body);
      });
      return;
    }
    const up = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (ur) => {
      const chunks: Buffer[] = [];
      ur.on('data', (c: Buffer) => chunks.push(c));
      ur.on('end', () => {
        const send = () => {
          if (res.destroyed) return;
          res.writeHead(ur.statusCode ?? 502, ur.headers);
          res.end(Buffer.concat(chunks));
        };
        if (v === 'pass') send();
        else setTimeout(send, v.lateMs);
      });
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTeardown(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const DRIVER = String.raw`
import os, sys, hashlib
fds = {}
def shaof(fd):
    h = hashlib.sha256(); off = 0
    while True:
        b = os.pread(fd, 1 << 20, off)
        if not b: break
        h.update(b); off += len(b)
    return h.hexdigest()
for line in sys.stdin:
    a = line.split()
    try:
        c = a[0]
        if c == 'open':
            fds[a[1]] = os.open(a[2], int(a[3], 0), 0o644)
        elif c == 'write':
            b = bytes([int(a[2])]) * int(a[3]); off = int(a[4]); at = 0
            while at < len(b):
                at += os.pwrite(fds[a[1]], b[at:at + (1 << 20)], off + at)
        elif c == 'fsync':
            os.fsync(fds[a[1]])
        elif c == 'close':
            fd = fds.pop(a[1]); os.close(fd)
        elif c == 'sha':
            print('OK ' + shaof(fds[a[1]]), flush=True); continue
        elif c == 'cat':
            with open(a[1], 'rb') as f: print('OK ' + f.read().decode(), flush=True)
            continue
        elif c == 'psha':
            fd = os.open(a[1], os.O_RDONLY)
            try: print('OK ' + shaof(fd), flush=True)
            finally: os.close(fd)
            continue
        elif c == 'put':
            fd = os.open(a[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.write(fd, a[2].encode()); os.close(fd)
        elif c == 'append':
            fd = os.open(a[1], os.O_WRONLY | os.O_APPEND)
            os.write(fd, a[2].encode()); os.close(fd)
        elif c == 'stat':
            s = os.stat(a[1]); print('OK %d %o' % (s.st_size, s.st_mode & 0o7777), flush=True); continue
        elif c == 'fstat':
            s = os.fstat(fds[a[1]]); print('OK %d %o' % (s.st_size, s.st_mode & 0o7777), flush=True); continue
        elif c == 'chmod':
            os.chmod(a[1], int(a[2], 8))
        elif c == 'fchmod':
            os.fchmod(fds[a[1]], int(a[2], 8))
        elif c == 'truncate':
            os.truncate(a[1], int(a[2]))
        elif c == 'rename':
            os.rename(a[1], a[2])
        elif c == 'unlink':
            os.unlink(a[1])
        elif c == 'mkdir':
            os.mkdir(a[1])
        elif c == 'reopen':
            fds[a[2]] = os.open('/proc/self/fd/%d' % fds[a[1]], int(a[3], 0))
        elif c == 'fwrite':
            os.write(fds[a[1]], a[2].encode())
        elif c == 'sleep':
            import time; time.sleep(float(a[1]))
        print('OK', flush=True)
    except OSError as e:
        print('ERR ' + os.strerror(e.errno), flush=True)
    except Exception as e:
        print('ERR ' + type(e).__name__, flush=True)
`;

/** A python process holding descriptors on the mount, one command at a time. */
export function driver(): (line: string) => Promise<string> {
  const p = spawn('python3', ['-c', DRIVER], { stdio: ['pipe', 'pipe', 'inherit'] });
  trackPid(p.pid);
  p.on('close', () => untrackPid(p.pid));
  onTeardown(() => {
    p.kill('SIGKILL');
  });
  const lines = createInterface({ input: p.stdout! })[Symbol.asyncIterator]();
  return async (line) => {
    p.stdin!.write(`${line}\n`);
    const r = await lines.next();
    return r.done ? 'EXITED' : r.value;
  };
}
