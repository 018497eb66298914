// Shared pieces for the attacks on a replacement worker's index read: an origin whose bodies are
// derived from the path (so any foreign body shows by SHA-256), a cache directory seeded with
// thousands of entry files written directly (one real entry, cloned under other keys, so the
// read takes seconds), and killing a gateway's worker to make the primary start a replacement.

import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { decodeTail, encodeTrailer, TRAILER_FIXED } from '../../../gateway/cache/format.ts';
import type { EntryMeta } from '../../../gateway/cache/entry.ts';
import { entryFiles, get, origin, workers as pgrepWorkers } from './disk-lib.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { freePort, sleep, startGateway, type Gateway } from './gateway-lib.ts';

/** The body the origin serves for `path` (generation `gen`): 64 bytes, distinct per path. */
export function bodyOf(path: string, gen = 0): Buffer {
  return Buffer.from(createHash('sha256').update(`${gen}:${path}`).digest('hex'), 'latin1');
}

export const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

export interface Origin {
  port: number;
  /** Requests seen per path. */
  hits: Map<string, number>;
  /** Bumped to make the origin's bodies change (a newer version of every object). */
  gen: { value: number };
}

/** An origin serving bodyOf(path, gen) with a long max-age; `extra` may add headers. */
export async function pathOrigin(extra: Record<string, string> = {}): Promise<Origin> {
  const hits = new Map<string, number>();
  const gen = { value: 0 };
  const port = await origin((req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const body = bodyOf(path, gen.value);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'max-age=86400', 'content-length': body.length, ...extra });
    res.end(body);
  });
  return { port, hits, gen };
}

/** Reads an entry file's trailer. */
export function readMeta(path: string): EntryMeta {
  const buf = readFileSync(path);
  const len = decodeTail(buf.subarray(buf.length - TRAILER_FIXED))!;
  return JSON.parse(buf.subarray(buf.length - TRAILER_FIXED - len, buf.length - TRAILER_FIXED).toString('utf8')) as EntryMeta;
}

/**
 * Stores /seed through a gateway (then stops it), and writes `n` clones of its entry for the
 * paths `pathFor(i)`, with the origin's bodies, oldest first. Returns the paths.
 */
export async function seedCache(cacheDir: string, o: Origin, n: number, pathFor = (i: number) => `/o/${i}`): Promise<string[]> {
  const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${o.port}`, '--cache-dir', cacheDir]);
  const r = await get(gw.port, '/seed');
  if (r.status !== 200) throw new Error(`seed: ${r.status}`);
  await gw.child.stop();
  const files = entryFiles(cacheDir);
  if (files.length !== 1) throw new Error(`seed: ${files.length} files`);
  const meta = readMeta(files[0]!);
  const paths: string[] = [];
  const root = join(cacheDir, 'v1');
  const t0 = meta.responseTime - n - 10_000;
  for (let i = 0; i < n; i++) {
    const path = pathFor(i);
    paths.push(path);
    const m: EntryMeta = {
      ...meta,
      key: meta.key.replace('/seed', path),
      url: meta.url.replace('/seed', path),
      requestTime: t0 + i,
      responseTime: t0 + i,
    };
    const name = randomBytes(16).toString('hex');
    mkdirSync(join(root, name.slice(0, 2)), { recursive: true });
    writeFileSync(join(root, name.slice(0, 2), name), Buffer.concat([bodyOf(path), encodeTrailer(m)]));
  }
  return paths;
}

/** The gateway's worker pids (none while the primary has none). */
export function workers(primary: number): number[] {
  try {
    return pgrepWorkers(primary);
  } catch {
    return [];
  }
}

/** SIGKILLs the gateway's (only or first) worker; resolves the replacement's pid once it runs. */
export async function killWorker(gw: Gateway, which = 0): Promise<number> {
  const before = workers(gw.child.pid);
  const victim = before[which]!;
  process.kill(victim, 'SIGKILL');
  for (let i = 0; i < 400; i++) {
    const now = workers(gw.child.pid);
    const fresh = now.find((p) => !before.includes(p));
    if (fresh !== undefined) return fresh;
    await sleep(25);
  }
  throw new Error('no replacement worker');
}

/** Polls `probe` until it is true or `ms` pass. */
export async function until(probe: () => Promise<boolean> | boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await probe()) return true;
    await sleep(100);
  }
  return false;
}

export { entryFiles, get };

/**
 * POSTs JSON to the admin API (`/estuary/v1/admin/<path>`) with `token`; resolves the JSON answer.
 * Each call opens its own connection: a pooled keep-alive connection may belong to a worker the
 * caller has just killed, and a request written on it before its close is read hangs up.
 */
export function adminPost(port: number, token: string, path: string, body: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        agent: false,
        method: 'POST',
        path: `/estuary/v1/admin/${path}`,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
      },
      (res) => {
        let out = '';
        res.on('data', (d: Buffer) => (out += d.toString()));
        res.on('end', () => resolve(JSON.parse(out) as unknown));
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

const NOBODY = 65534;
const ESTUARY = join(import.meta.dirname, '..', '..', '..', 'bin', 'estuary.js');

/**
 * A cache of `n` entries /o/0.. whose directories a gateway run as nobody cannot read at start:
 * it runs, has logged so, and `giveBack()` makes them readable (and, with `files`, its files
 * nobody's) as the logged line asks. The caller stops `child` when it needs to.
 */
export async function unreadableCache(n: number, token: string) {
  const o = await pathOrigin();
  const base = await tempDir();
  chmodSync(base, 0o755);
  const cacheDir = join(base, 'cache');
  const paths = await seedCache(cacheDir, o, n);
  execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, cacheDir]);
  const root = join(cacheDir, 'v1');
  const subs = readdirSync(root).filter((s) => /^[0-9a-f]{2}$/.test(s));
  for (const s of subs) chmodSync(join(root, s), 0o000);
  const port = await freePort();
  const child = startChild(
    NODE,
    [ESTUARY, 'gateway', '--listen', `127.0.0.1:${port}`, '--log-format', 'json', '--upstream', `o=http://127.0.0.1:${o.port}`,
      '--cache-dir', cacheDir, '--admin-token', token],
    { uid: NOBODY, gid: NOBODY },
  );
  await child.waitFor(/gateway listening/, 30_000);
  if (!(await until(() => /cannot read a cache directory/.test(child.output()), 20_000))) throw new Error('the gateway never said it could not read the cache');
  const giveBack = (files = false) => {
    for (const s of subs) chmodSync(join(root, s), 0o755);
    if (files) for (const s of subs) for (const f of readdirSync(join(root, s))) chownSync(join(root, s, f), NOBODY, NOBODY);
  };
  return { o, port, paths, child, giveBack };
}
