// The disk tier's files, changed by other programs. docs/CACHING.md, tenet 1: "Never serve a
// partial or corrupt body as if it were whole", and "Layout": "a file without a valid trailer (a
// crash in the middle of an update, a damaged copy) is deleted, never served".

import { appendFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import { startGateway } from './gateway-lib.ts';
import { entryFiles, get, origin } from './disk-lib.ts';

const MiB = 1024 * 1024;

function body(n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + (i >> 9)) & 255;
  return b;
}

/** An origin serving `content` at every path, fresh for 10 minutes; counts its requests. */
async function fixedOrigin(content: Buffer, extra: Record<string, string> = {}): Promise<{ port: number; hits: () => number }> {
  let n = 0;
  const port = await origin((_req, res) => {
    n++;
    res.writeHead(200, { 'content-length': String(content.length), 'cache-control': 'max-age=600', ...extra });
    res.end(content);
  });
  return { port, hits: () => n };
}

/** Rewrites an entry file's trailer JSON with `edit`. */
function editTrailer(path: string, edit: (meta: Record<string, unknown>) => Record<string, unknown>): void {
  const file = readFileSync(path);
  const len = file.readUInt32BE(file.length - 12);
  const meta = JSON.parse(file.subarray(file.length - 12 - len, file.length - 12).toString('utf8')) as Record<string, unknown>;
  const bodyPart = file.subarray(0, file.length - 12 - len);
  const json = Buffer.from(JSON.stringify(edit(meta)), 'utf8');
  const tail = Buffer.alloc(12);
  tail.writeUInt32BE(json.length, 0);
  tail.write('ESTUARY1', 4, 'latin1');
  writeFileSync(path, Buffer.concat([bodyPart, json, tail]));
}

describe('entry files changed under a running gateway', () => {
  it('an entry truncated by another program is dropped after the first cut answer, not cut forever', { timeout: 60_000 }, async () => {
    // The body is larger than --mem-object-max, so hits read the file.
    const content = body(3 * MiB);
    const up = await fixedOrigin(content);
    const dir = await tempDir('atk-gwdisk-');
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${up.port}`, '--cache-dir', dir]);
    const first = await get(gw.port, '/t', { host: 'o' });
    expect(first.status).toBe(200);
    expect(first.body.equals(content)).toBe(true);
    const [file] = entryFiles(dir);
    expect(file).toBeDefined();
    truncateSync(file!, MiB);
    // The first hit finds out: it may be cut (never a short body that looks whole) ...
    const hit = await get(gw.port, '/t', { host: 'o' });
    expect(hit.error !== undefined || hit.body.equals(content)).toBe(true);
    // ... but the entry it found damaged must go: the next requests get the whole object again.
    const outcomes: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await get(gw.port, '/t', { host: 'o' });
      outcomes.push(`${r.status} ${r.body.length}${r.error ? ` ${r.error}` : ''}`);
    }
    expect(outcomes, `answers after the truncation; the origin saw ${up.hits()} requests`).toEqual([
      `200 ${3 * MiB}`,
      `200 ${3 * MiB}`,
      `200 ${3 * MiB}`,
    ]);
  });

  it('an entry whose trailer lost its headers is discarded at start-up, never served', { timeout: 60_000 }, async () => {
    const content = body(1000);
    const up = await fixedOrigin(content, { 'x-origin': 'yes' });
    const dir = await tempDir('atk-gwdisk-');
    let gw = await startGateway(['--upstream', `o=http://127.0.0.1:${up.port}`, '--cache-dir', dir]);
    expect((await get(gw.port, '/h', { host: 'o' })).status).toBe(200);
    await gw.child.stop();
    const [file] = entryFiles(dir);
    // A damaged copy: valid JSON, valid length and magic, but no headers object.
    editTrailer(file!, (m) => {
      const { headers: _h, ...rest } = m;
      return rest;
    });
    gw = await startGateway(['--upstream', `o=http://127.0.0.1:${up.port}`, '--cache-dir', dir]);
    const r = await get(gw.port, '/h', { host: 'o' });
    expect(`${r.status} ${r.error ?? ''}`).toBe('200 ');
    expect(r.body.equals(content)).toBe(true);
    expect(r.headers['x-origin']).toBe('yes');
    // and the gateway is still there for the next client
    const again = await get(gw.port, '/h', { host: 'o' });
    expect(again.status).toBe(200);
  });

  it('an entry whose trailer holds a header value a response cannot carry is discarded, never served', { timeout: 60_000 }, async () => {
    const content = body(1000);
    const up = await fixedOrigin(content, { 'x-origin': 'yes' });
    const dir = await tempDir('atk-gwdisk-');
    let gw = await startGateway(['--upstream', `o=http://127.0.0.1:${up.port}`, '--cache-dir', dir]);
    expect((await get(gw.port, '/c', { host: 'o' })).status).toBe(200);
    await gw.child.stop();
    const [file] = entryFiles(dir);
    editTrailer(file!, (m) => ({ ...m, headers: { ...(m.headers as object), 'x-origin': 'yes\r\nset-cookie: injected=1' } }));
    gw = await startGateway(['--upstream', `o=http://127.0.0.1:${up.port}`, '--cache-dir', dir]);
    const r = await get(gw.port, '/c', { host: 'o' });
    expect(r.headers['set-cookie']).toBeUndefined();
    expect(`${r.status} ${r.error ?? ''}`).toBe('200 ');
    expect(r.body.equals(content)).toBe(true);
  });

  it('foreign files, directories and symlinks under v1/ do not stop the start or get served', { timeout: 60_000 }, async () => {
    const content = body(5000);
    const up = await fixedOrigin(content);
    const dir = await tempDir('atk-gwdisk-');
    let gw = await startGateway(['--upstream', `o=http://127.0.0.1:${up.port}`, '--cache-dir', dir]);
    expect((await get(gw.port, '/f', { host: 'o' })).status).toBe(200);
    await gw.child.stop();
    const [file] = entryFiles(dir);
    const sub = join(dir, 'v1', 'ab');
    mkdirSync(join(sub, 'cd'.repeat(16)), { recursive: true });
    writeFileSync(join(sub, 'cd'.repeat(16), 'keep'), 'x');
    symlinkSync(file!, join(sub, 'ef'.repeat(16)));
    symlinkSync('/nonexistent/target', join(sub, '01'.repeat(16)));
    writeFileSync(join(dir, 'v1', 'README'), 'foreign');
    mkdirSync(join(dir, 'v1', 'zz'));
    writeFileSync(join(dir, 'v1', 'zz', 'keep'), 'foreign');
    gw = await startGateway(['--upstream', `o=http://127.0.0.1:${up.port}`, '--cache-dir', dir]);
    const r = await get(gw.port, '/f', { host: 'o' });
    expect(r.status).toBe(200);
    expect(r.body.equals(content)).toBe(true);
    expect(existsSync(join(dir, 'v1', 'README'))).toBe(true);
    expect(existsSync(join(dir, 'v1', 'zz', 'keep'))).toBe(true);
  });

  // A foreign file or a dangling symlink where a two-hex sub-directory would be: the scan's
  // readdir throws ENOTDIR/ENOENT, the worker dies at start and the gateway exits 1 with a stack
  // trace ("estuary: unexpected failure: Error: ENOTDIR ... scandir '<dir>/v1/ab'"). Appearing
  // while the gateway runs, it turns the next worker restart into a crash loop. Expected: it is
  // skipped like any other foreign name (as v1/zz/ is), and the gateway serves.
  for (const kind of ['file', 'dangling symlink'] as const) {
    it(`a ${kind} named like a sub-directory (v1/ab) does not stop the start`, { timeout: 60_000 }, async () => {
      const content = body(100);
      const up = await fixedOrigin(content);
      const dir = await tempDir('atk-gwdisk-');
      mkdirSync(join(dir, 'v1'), { recursive: true });
      if (kind === 'file') writeFileSync(join(dir, 'v1', 'ab'), 'foreign');
      else symlinkSync('/nonexistent/target', join(dir, 'v1', 'ab'));
      const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${up.port}`, '--cache-dir', dir]);
      const r = await get(gw.port, '/x', { host: 'o' });
      expect(r.status).toBe(200);
    });
  }

  // docs/ERRORS.md: ESTUARY_GW_CACHE_DIR, "the --cache-dir cannot be created or written
  // (permission, read-only file system, a file in the way, disk full)", and COMMON's rule: a
  // daemon that cannot do its job exits 2 with one line. A file where v1/ should be gives
  // "estuary: unexpected failure: ENOTDIR ... lstat '<dir>/v1/tmp'", a stack trace and status 1.
  it('a file in the way of v1/ is ESTUARY_GW_CACHE_DIR, exit 2, one line', { timeout: 60_000 }, async () => {
    const dir = await tempDir('atk-gwdisk-');
    writeFileSync(join(dir, 'v1'), 'in the way');
    const bin = join(import.meta.dirname, '..', '..', '..', 'bin', 'estuary.js');
    const child = startChild(NODE, [bin, 'gateway', '--listen', '127.0.0.1:0', '--upstream', 'o=http://127.0.0.1:9', '--cache-dir', dir, '--log-format', 'json']);
    const code = await child.exited;
    const text = child.output().split('\n').filter((l) => l.trim() !== '' && !l.startsWith('{'));
    expect(code, child.output()).toBe(2);
    expect(text.join('\n')).toMatch(/ESTUARY_GW_CACHE_DIR|not usable/);
    expect(text, 'one line, no stack trace').toHaveLength(1);
  });

  it('an entry extended by another program is still served byte for byte (regression)', { timeout: 60_000 }, async () => {
    const content = body(3 * MiB);
    const up = await fixedOrigin(content);
    const dir = await tempDir('atk-gwdisk-');
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${up.port}`, '--cache-dir', dir]);
    expect((await get(gw.port, '/e', { host: 'o' })).status).toBe(200);
    appendFileSync(entryFiles(dir)[0]!, Buffer.alloc(MiB, 0x7a));
    const r = await get(gw.port, '/e', { host: 'o' });
    expect(r.error).toBeUndefined();
    expect(r.body.equals(content)).toBe(true);
  });

  it('trailers that claim huge or impossible lengths are discarded at start (regression)', { timeout: 60_000 }, async () => {
    const up = await fixedOrigin(body(10));
    const dir = await tempDir('atk-gwdisk-');
    const sub = join(dir, 'v1', 'ab');
    mkdirSync(sub, { recursive: true });
    for (const [name, len] of [['a', 0xffffffff], ['b', 1 << 20], ['c', 0]] as const) {
      const tail = Buffer.alloc(12);
      tail.writeUInt32BE(len, 0);
      tail.write('ESTUARY1', 4, 'latin1');
      writeFileSync(join(sub, name.repeat(32)), Buffer.concat([Buffer.from('{"key":"reverse://o/z","size":0,"status":200}'), tail]));
    }
    const gw = await startGateway(['--upstream', `o=http://127.0.0.1:${up.port}`, '--cache-dir', dir]);
    const r = await get(gw.port, '/z', { host: 'o' });
    expect(r.status).toBe(200);
    expect(r.body.equals(body(10))).toBe(true);
  });
});
