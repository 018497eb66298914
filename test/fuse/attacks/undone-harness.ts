// Shared by the undone-* attacks: MinIO behind a relay that refuses CopyObject on demand, a mount
// with a 0 s cache TTL, and a python driver that runs syscalls one at a time (fast enough to act
// within the second the kernel keeps its entry of a name whose hide was undone).

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import { onTeardown, trackPid, untrackPid } from '../../helpers/cleanup.ts';
import { type MinioServer, startMinio } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { type Mounted, mountBucket } from '../mount-helpers.ts';
import { Bucket } from './hidden-harness.ts';
import { ACCESS_DENIED, startProxy, type Verdict } from './rmopen-harness.ts';

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

export interface Setup {
  server: MinioServer;
  bucket: Bucket;
  dir: string;
  /** The mount's process (for a kill -9). */
  mounted: Mounted;
  /** Mounts the bucket again through the relay, with the same cache directory. */
  remount(extra?: readonly string[]): Promise<Mounted>;
  /** What the mount has logged so far. */
  log(): string;
  refuse(on: boolean): void;
}

/** A mount that cannot read its callers' system calls (see untraceable-callers.mjs). */
export const UNTRACEABLE: NodeJS.ProcessEnv = { NODE_OPTIONS: `--import ${new URL('./untraceable-callers.mjs', import.meta.url).pathname}` };

/**
 * Both ways a mount handles a hide: knowing it is a rename's (it may read its callers' system
 * calls, as root may), and not (it removes the file first, and puts it back if the rename fails).
 */
export const CALLER_MODES: readonly [string, NodeJS.ProcessEnv][] = [
  ['callers traced', {}],
  ['callers untraceable', UNTRACEABLE],
];

export async function setup(
  name: string,
  extra: readonly string[] = [],
  other?: (method: string, path: string, headers: Record<string, unknown>) => Verdict,
  env: NodeJS.ProcessEnv = {},
): Promise<Setup> {
  const server = await startMinio();
  const bucket = new Bucket(server, `${name}-${process.pid}`);
  await bucket.create();
  let refuseCopy = false;
  const url = await startProxy(server.endpoint, (method, _path, headers) =>
    refuseCopy && method === 'PUT' && headers['x-amz-copy-source'] !== undefined ? { status: 403, body: ACCESS_DENIED } : (other?.(method, _path, headers) ?? 'pass'),
  );
  const cache = await tempDir('undone-cache-');
  const mount = (more: readonly string[]) =>
    mountBucket({ ...server, endpoint: url }, bucket.name, ['--cache-dir', cache, '--cache-ttl', '0s', '--request-timeout', '2s', '--retries', '1', ...more], env);
  const mounted = await mount(extra);
  return {
    server,
    bucket,
    dir: mounted.dir,
    mounted,
    remount: (more = extra) => mount(more),
    log: () => mounted.child.output(),
    refuse: (on) => {
      refuseCopy = on;
    },
  };
}

export const ORIGINAL = 'original-content';

/**
 * `name` written with ORIGINAL, held open by reader `r` of a new driver, and a `mv` of
 * `name-src` over it whose copy the relay refuses: libfuse hides the file, the rename fails, and
 * the mount undoes the hide (the kernel's entry of `name` still points at the hidden name).
 */
export async function failedMvOverReader(S: Setup, dir: string, name: string, expect: (v: unknown) => { toBe(x: unknown): void; toMatch(x: RegExp): void }) {
  const cmd = driver();
  const { join } = await import('node:path');
  const t = join(dir, name);
  const s = join(dir, `${name}-src`);
  expect(await cmd(`put ${t} ${ORIGINAL}`)).toBe('OK');
  expect(await cmd(`put ${s} source`)).toBe('OK');
  expect(await cmd(`open r ${t} 0`)).toBe('OK');
  expect(await cmd('sha r')).toBe(`OK ${sha(ORIGINAL)}`);
  S.refuse(true);
  const mv = await cmd(`rename ${s} ${t}`);
  S.refuse(false);
  expect(mv).toMatch(/^ERR/);
  return { cmd, t, s };
}

export const sha = (s: string) => createHash('sha256').update(s).digest('hex');
