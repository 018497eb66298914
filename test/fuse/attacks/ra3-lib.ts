// Shared pieces of the ra3 attacks on readahead across files (fuse/fs/next-file.ts, reads.ts) and
// on the mount's exit after a stop (fuse/command.ts): a MinIO bucket filled directly (another
// client), a relay in front of it that can hold chosen requests or strip ETags, and a Python
// driver that opens, reads and closes files on the mount one step at a time, so that a test can
// act between a reader's steps. Everything is torn down after the file (test/helpers/cleanup.ts).

import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeleteObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { onTeardown, trackPid, untrackPid } from '../../helpers/cleanup.ts';
import { s3Client } from '../../helpers/s3-smoke.ts';
import type { S3Server } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { startMinio } from '../../helpers/minio.ts';

export const MiB = 2 ** 20;

/** Another client of the bucket: PUTs and DELETEs straight to the server, never through the mount. */
export class Other {
  readonly s3: S3Client;
  readonly bucket: string;
  constructor(server: S3Server, bucket: string) {
    this.bucket = bucket;
    this.s3 = s3Client(server);
    onTeardown(() => this.s3.destroy());
  }
  async put(key: string, body: Buffer): Promise<string> {
    const r = await this.s3.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body }));
    return r.ETag ?? '';
  }
  async etag(key: string): Promise<string> {
    return (await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }))).ETag ?? '';
  }
  async del(key: string): Promise<void> {
    await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }
}

/** MD5 of each MiB of `buf`, as the driver reports what it read. */
export function mibDigests(buf: Buffer): string[] {
  const out: string[] = [];
  for (let at = 0; at < buf.length; at += MiB) out.push(createHash('md5').update(buf.subarray(at, at + MiB)).digest('hex'));
  return out;
}

/** Which version each MiB read came from: 'A', 'B', or '?' for neither. */
export function versions(read: readonly string[], a: Buffer, b: Buffer): string {
  const da = mibDigests(a);
  const db = mibDigests(b);
  return read.map((d, i) => (d === da[i] ? 'A' : d === db[i] ? 'B' : '?')).join('');
}

export interface RelayRequest {
  readonly method: string;
  /** The object key (path without the bucket), '' for the bucket itself. */
  readonly key: string;
  readonly query: string;
  /** The first byte of a Range, undefined without one. */
  readonly rangeStart: number | undefined;
  readonly range: string;
  status?: number;
  done?: boolean;
}

export interface Relay {
  /** The relay as a server to mount: its endpoint, the upstream's credentials. */
  readonly server: S3Server;
  readonly requests: RelayRequest[];
  /** Requests for which this says true wait until release(). */
  hold: (r: RelayRequest) => boolean;
  /** How many requests wait. */
  readonly held: number;
  release(): void;
  /** Strip ETags from every answer (headers and listings) and If-Match from requests. */
  stripEtags: boolean;
  /** Resolves once some request matches `pred` (and, with `done`, has been answered whole). */
  waitFor(pred: (r: RelayRequest) => boolean, timeoutMs?: number): Promise<RelayRequest>;
}

export async function startRelay(upstream: S3Server, bucket: string): Promise<Relay> {
  const agent = new http.Agent({ keepAlive: true });
  const waiting: (() => void)[] = [];
  const watchers = new Set<() => void>();
  const notify = () => {
    for (const w of [...watchers]) w();
  };
  const relay = {
    requests: [] as RelayRequest[],
    hold: (() => false) as (r: RelayRequest) => boolean,
    stripEtags: false,
    get held() {
      return waiting.length;
    },
    release() {
      for (const go of waiting.splice(0)) go();
    },
    waitFor(pred: (r: RelayRequest) => boolean, timeoutMs = 20_000): Promise<RelayRequest> {
      return new Promise((resolve, reject) => {
        const check = () => {
          const r = relay.requests.find(pred);
          if (r) {
            watchers.delete(check);
            clearTimeout(timer);
            resolve(r);
          }
        };
        const timer = setTimeout(() => {
          watchers.delete(check);
          reject(new Error(`relay: no such request within ${timeoutMs} ms; seen:\n${relay.requests.map(show).join('\n')}`));
        }, timeoutMs);
        watchers.add(check);
        check();
      });
    },
  };
  const srv = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = decodeURIComponent(url.pathname);
    const key = path.startsWith(`/${bucket}/`) ? path.slice(bucket.length + 2) : '';
    const range = String(req.headers.range ?? '');
    const m = /^bytes=(\d+)-/.exec(range);
    const info: RelayRequest = {
      method: req.method ?? '',
      key,
      query: url.search,
      rangeStart: m ? Number(m[1]) : undefined,
      range,
    };
    relay.requests.push(info);
    notify();
    const forward = () => {
      const headers = { ...req.headers };
      if (relay.stripEtags) delete headers['if-match'];
      const up = http.request(
        { host: '127.0.0.1', port: upstream.port, method: req.method, path: req.url, headers, agent },
        (ur) => {
          info.status = ur.statusCode;
          const out = { ...ur.headers };
          const listing = relay.stripEtags && req.method === 'GET' && key === '' && url.searchParams.has('list-type');
          if (relay.stripEtags) delete out.etag;
          if (listing) {
            const parts: Buffer[] = [];
            ur.on('data', (c: Buffer) => parts.push(c));
            ur.on('end', () => {
              const body = Buffer.from(Buffer.concat(parts).toString('utf8').replace(/<ETag>[^<]*<\/ETag>/g, ''), 'utf8');
              delete out['transfer-encoding'];
              out['content-length'] = String(body.length);
              res.writeHead(ur.statusCode ?? 502, out);
              res.end(body);
              info.done = true;
              notify();
            });
            return;
          }
          res.writeHead(ur.statusCode ?? 502, out);
          ur.pipe(res);
          ur.on('end', () => {
            info.done = true;
            notify();
          });
        },
      );
      up.on('error', () => res.socket?.destroy());
      req.pipe(up);
    };
    if (relay.hold(info)) {
      req.pause();
      waiting.push(() => {
        req.resume();
        forward();
      });
      notify();
    } else forward();
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  onTeardown(async () => {
    relay.release();
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
    agent.destroy();
  });
  return Object.assign(relay, { server: { ...upstream, endpoint: `http://127.0.0.1:${port}`, port } });
}

export const show = (r: RelayRequest) =>
  `${r.method} ${r.key}${r.query} ${r.range} -> ${r.status ?? '…'}${r.done ? ' done' : ''}`;

const DRIVER = String.raw`
import errno, hashlib, json, os, sys, time
MIB = 1 << 20
CHUNK = 128 * 1024
fds = {}
def out(o):
    sys.stdout.write("RA3 " + json.dumps(o) + "\n"); sys.stdout.flush()
class F:
    def __init__(self, fd):
        self.fd = fd; self.pos = 0; self.mibs = []; self.cur = hashlib.md5(); self.curlen = 0
    def take(self, data):
        view = memoryview(data)
        while len(view):
            n = min(len(view), MIB - self.curlen)
            self.cur.update(view[:n]); self.curlen += n; view = view[n:]
            if self.curlen == MIB:
                self.mibs.append(self.cur.hexdigest()); self.cur = hashlib.md5(); self.curlen = 0
    def read(self, upto):
        while upto is None or self.pos < upto:
            n = CHUNK if upto is None else min(CHUNK, upto - self.pos)
            data = os.read(self.fd, n)
            if not data: return True
            self.take(data); self.pos += len(data)
        return False
    def finish(self):
        if self.curlen: self.mibs.append(self.cur.hexdigest()); self.curlen = 0
        return self.mibs
def err(e, extra):
    d = {"err": errno.errorcode.get(e.errno, str(e.errno))}; d.update(extra); return d
for line in sys.stdin:
    c = json.loads(line); op = c["op"]; f = None
    try:
        if op == "open":
            fd = os.open(c["path"], os.O_RDONLY); fds[fd] = F(fd); out({"fd": fd})
        elif op == "read":
            f = fds[c["fd"]]; eof = f.read(c.get("upto")); out({"pos": f.pos, "eof": eof})
        elif op == "close":
            f = fds.pop(c["fd"]); os.close(f.fd); out({"mibs": f.finish(), "size": f.pos})
        elif op == "readall":
            fd = os.open(c["path"], os.O_RDONLY); f = F(fd)
            try:
                f.read(None)
            finally:
                os.close(fd)
            out({"mibs": f.finish(), "size": f.pos})
        elif op == "listdir":
            out({"names": os.listdir(c["path"])})
        elif op == "stat":
            s = os.stat(c["path"]); out({"ino": s.st_ino, "size": s.st_size})
        elif op == "rm":
            os.unlink(c["path"]); out({})
        elif op == "create":
            fd = os.open(c["path"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644); fds[fd] = F(fd); out({"fd": fd})
        elif op == "write":
            # Bytes [from, from + len) of the local file src, written at the handle's position.
            f = fds[c["fd"]]
            with open(c["src"], "rb") as s:
                s.seek(c["from"]); left = c["len"]
                while left > 0:
                    data = s.read(min(left, MIB))
                    n = os.write(f.fd, data); f.pos += n; left -= n
            out({"pos": f.pos})
        elif op == "rename":
            os.rename(c["from"], c["to"]); out({})
        else:
            out({"err": "unknown op " + op})
    except OSError as e:
        out(err(e, {"pos": f.pos if f else None}))
`;

export interface DriverAnswer {
  err?: string;
  fd?: number;
  pos?: number;
  eof?: boolean;
  mibs?: string[];
  size?: number;
  names?: string[];
  ino?: number;
}

/** A Python process that performs file operations on the mount, one command at a time. */
export interface Driver {
  cmd(c: Record<string, unknown>, timeoutMs?: number): Promise<DriverAnswer>;
  readonly pid: number;
}

export async function startDriver(): Promise<Driver> {
  const dir = await tempDir('estuary-ra3-driver-');
  const script = `${dir}/driver.py`;
  await writeFile(script, DRIVER);
  const proc = spawn('python3', ['-u', script], { stdio: ['pipe', 'pipe', 'pipe'] });
  const pid = proc.pid!;
  trackPid(pid);
  let buf = '';
  let stderr = '';
  const lines: string[] = [];
  let wake: (() => void) | undefined;
  proc.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (line.startsWith('RA3 ')) lines.push(line.slice(4));
    }
    wake?.();
  });
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let exited = false;
  proc.once('exit', () => {
    exited = true;
    untrackPid(pid);
    wake?.();
  });
  onTeardown(() => {
    if (!exited) proc.kill('SIGKILL');
  });
  let queue = Promise.resolve();
  const cmd = (c: Record<string, unknown>, timeoutMs = 60_000): Promise<DriverAnswer> => {
    const run = queue.then(
      () =>
        new Promise<DriverAnswer>((resolve, reject) => {
          const timer = setTimeout(() => {
            wake = undefined;
            reject(new Error(`driver: ${JSON.stringify(c)} got no answer in ${timeoutMs} ms (a hung mount?)`));
          }, timeoutMs);
          wake = () => {
            if (lines.length > 0) {
              clearTimeout(timer);
              wake = undefined;
              resolve(JSON.parse(lines.shift()!) as DriverAnswer);
            } else if (exited) {
              clearTimeout(timer);
              wake = undefined;
              reject(new Error(`driver exited: ${stderr}`));
            }
          };
          proc.stdin.write(`${JSON.stringify(c)}\n`);
          wake();
        }),
    );
    queue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  };
  return { cmd, pid };
}

/** The mount's peak resident memory (VmHWM) and its current one (VmRSS), in bytes. */
export function memoryOf(pid: number): { hwm: number; rss: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(s)?.[1] ?? 0) * 1024;
  return { hwm: kb('VmHWM'), rss: kb('VmRSS') };
}

/** CPU seconds (user + system) the process has used. */
export function cpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(rest[11]) + Number(rest[12])) / 100;
}

/**
 * A MinIO bucket `ra3` holding the directory a walker reads in these attacks: d/a0 and d/a1
 * (2 MiB), d/f1 (4 MiB), then d/f2 with `f2`. Having read a0, a1 and f1 whole, the walker gets
 * f2 guessed. Resolves f2's ETag too.
 */
export async function walkBucket(f2: Buffer) {
  const server = await startMinio({ buckets: ['ra3'] });
  const other = new Other(server, 'ra3');
  await other.put('d/a0', randomBytes(2 * MiB));
  await other.put('d/a1', randomBytes(2 * MiB));
  await other.put('d/f1', randomBytes(4 * MiB));
  const etag = await other.put('d/f2', f2);
  return { server, other, etag };
}
