// What held when the mount's cache directory was attacked (fuse/cache-dir.ts, fs/journal.ts,
// fs/held-lock.ts), kept as regressions: a --write-back cache that fills up while the store is
// down keeps and later uploads what was acknowledged and refuses what does not fit (SEMANTICS.md:
// "the cache disk is full while staging a file: ENOSPC"); a second mount on a journal is refused
// from another PID or mount namespace ("also from another PID namespace"); a read-only or full
// cache directory is refused with one line, exit 2 (ERRORS.md, ESTUARY_FS_CACHE_DIR).

import { execFileSync } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import { s3Client } from '../../helpers/s3-smoke.ts';
import { type S3rverServer, startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, serverEnv, sh } from '../mount-helpers.ts';
import { mount, mounted, secondStart, unmount } from './cache-dir-mounts.ts';
import { startRelay } from './mount-relay.ts';

afterAll(runTeardowns);

const BUCKET = 'kek';
const BIN = new URL('../../../bin/estuary.js', import.meta.url).pathname;

let s3: S3rverServer;

describe.runIf(fuseAvailable().ok)('a --write-back journal whose file system fills up while the store is down', () => {
  beforeAll(async () => {
    s3 ??= await startS3rver({ buckets: [BUCKET] });
  }, 30_000);

  // SEMANTICS.md: "the cache disk is full while staging a file: ENOSPC", and a file whose close()
  // failed was not stored. Files acknowledged before must stay whole and be uploaded later.
  it('keeps acknowledged files, and refuses the one that does not fit, when the cache fills', async () => {
    const cache = await tempDir('estuary-atk-fill-');
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', cache]);
    onTeardown(() => sh(`umount -l '${cache}'`).then(() => undefined));
    const relay = await startRelay(s3);
    relay.mode = { kind: 'status', status: 503, method: 'PUT' };
    const a = await mounted(await mount(relay.server, BUCKET, ['--cache-dir', cache, '--write-back']));
    const first = Buffer.alloc(3 * 2 ** 20, 7);
    await writeFile(join(a.dir, 'first.bin'), first);
    const second = await writeFile(join(a.dir, 'second.bin'), Buffer.alloc(6 * 2 ** 20, 9)).then(
      () => 'ok',
      (err: NodeJS.ErrnoException) => String(err.code),
    );
    expect(second).toMatch(/ENOSPC|EIO/);
    expect((await readFile(join(a.dir, 'first.bin'))).equals(first)).toBe(true);
    const listed = await readdir(a.dir);
    relay.mode = { kind: 'pass' };
    await unmount(a);
    const client = s3Client(s3);
    const stored = await client
      .send(new GetObjectCommand({ Bucket: BUCKET, Key: 'first.bin' }))
      .then(async (o) => Buffer.from(await o.Body!.transformToByteArray()), () => Buffer.alloc(0));
    expect(stored.equals(first)).toBe(true);
    // The refused file was not stored, and is not shown as if it had been.
    expect(listed).not.toContain('second.bin');
  }, 60_000);
});

describe.runIf(fuseAvailable().ok)('a cache dir the mount cannot use (holds today)', () => {
  beforeAll(async () => {
    s3 ??= await startS3rver({ buckets: [BUCKET] });
  }, 30_000);

  // SEMANTICS.md: a second mount on the journal is refused "also from another PID namespace (a
  // container that shares the directory)"; and from another mount namespace on the same files.
  it('refuses a second --write-back mount on the journal from another PID or mount namespace', async () => {
    const cache = await tempDir('estuary-atk-cache-');
    const a = await mounted(await mount(s3, BUCKET, ['--cache-dir', cache, '--write-back']));
    for (const ns of [['-p', '-f', '--mount-proc'], ['-m']]) {
      const dir = await tempDir('estuary-atk-ns-mnt-');
      const child = startChild(
        'unshare',
        [...ns, NODE, BIN, 'mount', BUCKET, dir, '--endpoint', s3.endpoint, '--cache-dir', cache, '--write-back'],
        { env: serverEnv(s3) },
      );
      const code = await Promise.race([child.exited, new Promise((r) => setTimeout(() => r('running'), 20_000))]);
      await child.stop('SIGKILL');
      expect(code, `${ns.join(' ')}: ${child.output()}`).toBe(2);
      expect(child.output()).toMatch(/write-back journal .* is in use/);
    }
    await unmount(a);
  }, 60_000);

  // A read-only file system (ext4 remounted read-only after errors, a read-only bind mount).
  it('refuses a read-only --cache-dir with one ESTUARY_FS_CACHE_DIR line, exit 2', async () => {
    const cache = await tempDir('estuary-atk-ro-');
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,ro', 'tmpfs', cache]);
    onTeardown(() => sh(`umount '${cache}'`).then(() => undefined));
    for (const extra of [[], ['--write-back']]) {
      const a = await secondStart(await mount(s3, BUCKET, ['--cache-dir', join(cache, 'sub'), ...extra]));
      expect(a.mounted, a.out).toBe(false);
      expect(a.code, a.out).toBe(2);
      expect(a.out).not.toMatch(/\n\s+at /);
      expect(a.out).toMatch(/cache/i);
    }
  }, 60_000);

  it('refuses a full --cache-dir file system with one line, exit 2', async () => {
    const cache = await tempDir('estuary-atk-full-');
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', cache]);
    onTeardown(() => sh(`umount '${cache}'`).then(() => undefined));
    await sh(`dd if=/dev/zero of='${cache}/fill' bs=4k count=100 2>/dev/null; true`);
    for (const extra of [[], ['--write-back']]) {
      const a = await secondStart(await mount(s3, BUCKET, ['--cache-dir', cache, ...extra]));
      expect(a.mounted, a.out).toBe(false);
      expect(a.code, a.out).toBe(2);
      expect(a.out).not.toMatch(/\n\s+at /);
    }
  }, 60_000);
});
