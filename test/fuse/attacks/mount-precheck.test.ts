// The checks `estuary mount` makes before it mounts. docs/ERRORS.md: "Errors at start-up end the
// command with one line on stderr", each naming its cause and what to do (ESTUARY_FS_MOUNTPOINT,
// ESTUARY_FS_CACHE_DIR, ESTUARY_FS_ENDPOINT_DOWN, …). A mount that cannot work must say so at
// once, exit, and leave nothing mounted and nothing behind.

import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { mkdir, readdir, readFile, symlink } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { isMounted } from '../../../fuse/mount-table.ts';
import { onTeardown } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, runEstuary, serverEnv, sh } from '../mount-helpers.ts';

const fuse = fuseAvailable();

const ENV = { ...process.env, AWS_ACCESS_KEY_ID: 'k', AWS_SECRET_ACCESS_KEY: 's', AWS_REGION: 'us-east-1' };

/** Starts `estuary mount`; resolves when it says "mounted" or exits, whichever comes first. */
async function tryMount(args: readonly string[], env: NodeJS.ProcessEnv, dir: string, waitMs: number) {
  const child = runEstuary(['mount', ...args, '--log-format', 'json'], env);
  onTeardown(async () => {
    if (await isMounted(dir)) await sh(`fusermount -uz '${dir}' || umount -l '${dir}'`);
    await child.stop('SIGKILL');
  });
  const started = Date.now();
  const mounted = child.waitFor(/"msg":"mounted /, waitMs).then(
    () => true,
    () => false,
  );
  const outcome = await Promise.race([mounted.then((m) => (m ? 'mounted' : 'waiting')), child.exited.then(() => 'exited')]);
  return { child, outcome, seconds: (Date.now() - started) / 1000 };
}

/** A web server that answers 200 text/html to everything: a console, a portal, a typo'd port. */
async function htmlServer(): Promise<string> {
  const srv: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><html><body>Welcome</body></html>\n');
    });
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  onTeardown(() => new Promise<void>((r) => srv.close(() => r())));
  return `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
}

/** Accepts connections and never answers. */
async function silentServer(): Promise<string> {
  const { createServer: tcp } = await import('node:net');
  const sockets = new Set<import('node:net').Socket>();
  const srv = tcp((s) => {
    sockets.add(s);
    s.on('error', () => {});
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  onTeardown(() => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((r) => srv.close(() => r()));
  });
  return `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
}

describe.skipIf(!fuse.ok)('estuary mount: checks before mounting', () => {
  it('--cache-dir inside the mountpoint is refused by name, and the empty mountpoint stays empty', async () => {
    const s3 = await startS3rver({ buckets: ['precheck'] });
    const mnt = await tempDir('atk-mnt-');
    const { child, outcome } = await tryMount(['precheck', mnt, '--endpoint', s3.endpoint, '--cache-dir', join(mnt, '.cache')], serverEnv(s3), mnt, 30_000);
    expect(outcome).not.toBe('mounted');
    expect(await child.exited).toBe(2);
    const out = child.output();
    // The real cause is that the cache directory would be hidden under the mount (and its staging
    // files would go through the mount itself). Today the mount creates <mnt>/.cache, then refuses
    // its own doing: "cannot mount on …: it is not empty (.cache); give an empty directory, or
    // --allow-non-empty" — advice that leads straight to the next test's EIO.
    expect(out).not.toMatch(/not empty/);
    expect(out).toMatch(/cache/i);
    // Nothing left behind in a directory the user gave empty.
    expect(await readdir(mnt)).toEqual([]);
  }, 60_000);

  it('--cache-dir inside the mountpoint with --allow-non-empty: refused, or changing a file works', async () => {
    const s3 = await startS3rver({ buckets: ['precheck2'] });
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    await client.send(new PutObjectCommand({ Bucket: 'precheck2', Key: 'log.txt', Body: 'line 1\n' }));
    client.destroy();
    const mnt = await tempDir('atk-mnt-');
    const args = ['precheck2', mnt, '--endpoint', s3.endpoint, '--cache-dir', join(mnt, '.cache'), '--allow-non-empty'];
    const { child, outcome } = await tryMount(args, serverEnv(s3), mnt, 30_000);
    if (outcome !== 'mounted') {
      // A refusal naming the cause is the fix we expect.
      expect(await child.exited).toBe(2);
      expect(child.output()).toMatch(/cache/i);
      return;
    }
    // Today it mounts, hiding its own staging directory under the mount: the first change to an
    // existing object needs a staging file in <mnt>/.cache/staging-PID, which now resolves
    // through the mount itself, so the append fails with EIO ("operation failed with EIO": ENOENT
    // on '<mnt>/.cache/staging-…').
    const r = await sh(`echo 'line 2' >> '${mnt}/log.txt' && cat '${mnt}/log.txt'`, undefined, 30_000);
    expect(r.out).toBe('line 1\nline 2\n');
    expect(r.code).toBe(0);
  }, 60_000);

  it('an endpoint that is not S3 (a web server answering 200 HTML) is refused before mounting', async () => {
    const endpoint = await htmlServer();
    const mnt = await tempDir('atk-mnt-');
    const { child, outcome } = await tryMount(['data', mnt, '--endpoint', endpoint], ENV, mnt, 30_000);
    // Today it mounts an empty bucket without a word, and every new file then says "Is a
    // directory" (the HEAD of any key answers 200). Expected: one line saying the endpoint does not
    // answer like S3 (HTML where XML was due), exit 2, nothing mounted.
    expect(outcome, child.output().slice(-400)).toBe('exited');
    expect(await child.exited).toBe(2);
    expect(await isMounted(mnt)).toBe(false);
    expect(child.output()).toMatch(/S3/);
  }, 60_000);

  it('an endpoint that accepts and never answers is named within 30 s with the default options', async () => {
    const endpoint = await silentServer();
    const mnt = await tempDir('atk-mnt-');
    const { child, outcome, seconds } = await tryMount(['data', mnt, '--endpoint', endpoint], ENV, mnt, 30_000);
    // Today: silence. The bucket check waits --request-timeout (60 s) per attempt, times --retries
    // (6), with backoff in between: more than six minutes without a single line, then exit 1.
    // A pre-mount check should give up (or at least say what it waits for) within seconds.
    expect(outcome, `after ${seconds} s: ${child.output().slice(-300)}`).toBe('exited');
    expect(child.output()).toContain(endpoint.replace('http://', ''));
    expect(await isMounted(mnt)).toBe(false);
  }, 60_000);

  it('an http:// endpoint that is a TLS port is named as such, not as a server that is down', async () => {
    // What Go's net/http (MinIO, SeaweedFS, Ceph's rgw behind Go proxies) answers plain HTTP on a
    // TLS port. ESTUARY_ENDPOINT_NOT_TLS names the opposite mistake (https:// to plain HTTP);
    // this one today ends as ESTUARY_FS_ENDPOINT_DOWN, exit 1: "cannot reach the S3 endpoint
    // http://… (Unknown (HTTP 400): UnknownError); check --endpoint and that the server is up" —
    // the server is up, and said what is wrong.
    const { createServer: tcp } = await import('node:net');
    const srv = tcp((c) => {
      c.on('error', () => {});
      c.once('data', () => c.end('HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n'));
    });
    srv.listen(0, '127.0.0.1');
    await once(srv, 'listening');
    onTeardown(() => new Promise<void>((r) => srv.close(() => r())));
    const endpoint = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
    const mnt = await tempDir('atk-mnt-');
    const { child } = await tryMount(['data', mnt, '--endpoint', endpoint], ENV, mnt, 30_000);
    expect(await child.exited).toBe(2);
    expect(child.output()).toMatch(/https:\/\/127\.0\.0\.1/);
    expect(child.output()).not.toMatch(/that the server is up/);
  }, 60_000);

  it('a mountpoint reached through a symlink (or a symlinked parent, /home -> /export/home) stays mounted', async () => {
    const s3 = await startS3rver({ buckets: ['viasymlink'] });
    const base = await tempDir('atk-mnt-');
    const real = join(base, 'real');
    await mkdir(join(real, 'mnt'), { recursive: true });
    await symlink(real, join(base, 'home')); // the parent is a symlink, as /home often is on clusters
    const given = join(base, 'home', 'mnt');
    const { child, outcome } = await tryMount(['viasymlink', given, '--endpoint', s3.endpoint], serverEnv(s3), join(real, 'mnt'), 30_000);
    expect(outcome).toBe('mounted');
    await new Promise((r) => setTimeout(r, 4000));
    // Today: /proc/mounts names the resolved path (<base>/real/mnt), the mount's watch for an
    // outside unmount compares it with the path as given, decides after 1 s that someone unmounted
    // it, sends itself SIGTERM, logs "unmounted" and "stopped", exits 0 — and leaves the kernel
    // mount behind, dead: every access answers ENOTCONN "Transport endpoint is not connected".
    expect(child.output()).not.toMatch(/"msg":"stopping"/);
    const ls = await sh(`ls -a '${given}'`, undefined, 10_000);
    expect(ls.out).not.toMatch(/not connected/);
    expect(ls.code).toBe(0);
    // And whatever happened, nothing dead may stay mounted once the process is gone.
    await child.stop('SIGTERM', 15_000);
    expect(await isMounted(join(real, 'mnt'))).toBe(false);
  }, 60_000);

  it('holds: a mountpoint that is a file, missing, or already mounted gets one line and exit 2', async () => {
    const base = await tempDir('atk-mnt-');
    const file = join(base, 'file');
    await sh(`echo x > '${file}'`);
    const missing = join(base, 'missing');
    const endpoint = await silentServer();
    for (const [mp, why] of [
      [file, /not a directory/],
      [missing, /does not exist/],
    ] as const) {
      const { child } = await tryMount(['data', mp, '--endpoint', endpoint], ENV, mp, 15_000);
      expect(await child.exited).toBe(2);
      expect(child.output()).toMatch(why);
      expect(child.output().trim().split('\n')).toHaveLength(1);
    }
    expect(await readFile(file, 'utf8')).toBe('x\n');
    await mkdir(join(base, 'dir'));
    const busy = join(base, 'dir');
    const t = await sh(`mount -t tmpfs -o size=1m tmpfs '${busy}'`);
    expect(t.code).toBe(0);
    onTeardown(async () => {
      await sh(`umount -l '${busy}'`);
    });
    const { child } = await tryMount(['data', busy, '--endpoint', endpoint], ENV, busy, 15_000);
    expect(await child.exited).toBe(2);
    expect(child.output()).toMatch(/already mounted/);
  }, 60_000);
});
