// The mountpoint and cache-directory checks of `estuary mount` (fuse/mount-precheck.ts,
// fuse/cache-dir.ts) where paths run through symlinks, as cluster home and scratch paths do
// (/home -> /export/home): a dead mount left there is cleaned up and mounted over, `estuary
// umount` finds the mount, and a default cache directory under the mountpoint is refused before
// anything is created. And the endpoint probe's deadline, as --help states it. The attack tests
// in test/fuse/attacks/mount-precheck.test.ts cover the rest.

import { once } from 'node:events';
import { mkdir, readdir, symlink } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isMounted } from '../../fuse/mount-table.ts';
import { onTeardown } from '../helpers/cleanup.ts';
import { startS3rver } from '../helpers/s3rver.ts';
import { tempDir } from '../helpers/tmp.ts';
import { fuseAvailable, runEstuary, serverEnv, sh } from './mount-helpers.ts';

const fuse = fuseAvailable();

/** `<base>/real/mnt`, and the same directory reached as `<base>/home/mnt` through a symlink. */
async function symlinkedMountpoint(): Promise<{ real: string; given: string }> {
  const base = await tempDir('estuary-symlinked-');
  await mkdir(join(base, 'real', 'mnt'), { recursive: true });
  await symlink(join(base, 'real'), join(base, 'home'));
  const real = join(base, 'real', 'mnt');
  onTeardown(async () => {
    if (await isMounted(real)) await sh(`fusermount -uz '${real}' || umount -l '${real}'`);
  });
  return { real, given: join(base, 'home', 'mnt') };
}

describe.skipIf(!fuse.ok)('estuary mount: the endpoint probe', () => {
  it('names a port that accepts and never answers after the 5 s --help promises, mounting nothing', async () => {
    const silent = createServer((s) => s.on('error', () => {}));
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const sockets: import('node:net').Socket[] = [];
    silent.on('connection', (s) => sockets.push(s));
    onTeardown(() => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => silent.close(() => r()));
    });
    const endpoint = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const mnt = await tempDir('estuary-silent-');
    const started = Date.now();
    const child = runEstuary(['mount', 'bkt', mnt, '--endpoint', endpoint], {
      ...process.env,
      AWS_ACCESS_KEY_ID: 'k',
      AWS_SECRET_ACCESS_KEY: 's',
    });
    expect(await child.exited).toBe(1);
    const seconds = (Date.now() - started) / 1000;
    expect(seconds).toBeGreaterThanOrEqual(5);
    expect(seconds).toBeLessThan(20);
    expect(child.output().trim()).toMatch(new RegExp(`^estuary: cannot reach the S3 endpoint ${endpoint} \\(it accepted the connection but sent no answer within 5 s\\)`));
    expect(await isMounted(mnt)).toBe(false);
  }, 60_000);
});

describe.skipIf(!fuse.ok)('estuary mount on a path through a symlink', () => {
  it('cleans up a dead mount left there, mounts again, refuses a second mount, and estuary umount finds it', async () => {
    const s3 = await startS3rver({ buckets: ['linked'] });
    const { real, given } = await symlinkedMountpoint();
    const args = ['mount', 'linked', given, '--endpoint', s3.endpoint, '--log-format', 'json'];
    const first = runEstuary(args, serverEnv(s3));
    onTeardown(async () => {
      await first.stop('SIGKILL');
    });
    await first.waitFor(/"msg":"mounted /, 30_000);
    // kill -9 leaves the kernel mount behind, dead: every access answers ENOTCONN.
    await first.stop('SIGKILL');
    expect(await isMounted(given)).toBe(true);
    expect((await sh(`ls '${given}'`)).out).toMatch(/not connected/);

    const second = runEstuary(args, serverEnv(s3));
    onTeardown(async () => {
      await second.stop('SIGKILL');
    });
    await second.waitFor(/"msg":"mounted /, 30_000);
    expect((await sh(`echo x > '${given}/f' && cat '${real}/f'`, undefined, 30_000)).out).toBe('x\n');
    // A live mount there, reached through the symlink, is named before libfuse is asked.
    const third = runEstuary(args, serverEnv(s3));
    expect(await third.exited).toBe(2);
    expect(third.output()).toMatch(/cannot mount on .*: something is already mounted there/);

    const um = runEstuary(['umount', given], serverEnv(s3));
    expect(await um.exited).toBe(0);
    expect(await second.exited).toBe(0);
    expect(await isMounted(real)).toBe(false);
  }, 60_000);

  it('refuses a default cache directory under the mountpoint, creating nothing', async () => {
    const s3 = await startS3rver({ buckets: ['linked2'] });
    const { real, given } = await symlinkedMountpoint();
    // TMPDIR inside the mountpoint (reached by its real path): the default staging directory,
    // TMPDIR/estuary-UID, would be hidden by the mount.
    const child = runEstuary(['mount', 'linked2', given, '--endpoint', s3.endpoint], { ...serverEnv(s3), TMPDIR: join(real, 'tmp') });
    expect(await child.exited).toBe(2);
    expect(child.output()).toMatch(/cannot use cache directory .*estuary-\d+ \(the default\): it is inside the mountpoint .*; give a --cache-dir outside/);
    expect(await readdir(real)).toEqual([]);
    expect(await isMounted(real)).toBe(false);
  }, 60_000);
});

describe.skipIf(!fuse.ok)('estuary mount on a small or full cache directory', () => {
  it('warns of little free space, and refuses a full one by its cause', async () => {
    const s3 = await startS3rver({ buckets: ['small'] });
    const cache = await tempDir('estuary-small-cache-');
    const t = await sh(`mount -t tmpfs -o size=1m tmpfs '${cache}'`);
    expect(t.code, t.out).toBe(0);
    onTeardown(async () => {
      await sh(`umount -l '${cache}'`);
    });
    const mnt = await tempDir('estuary-small-mnt-');
    const child = runEstuary(['mount', 'small', mnt, '--endpoint', s3.endpoint, '--cache-dir', cache, '--log-format', 'json'], serverEnv(s3));
    onTeardown(async () => {
      if (await isMounted(mnt)) await sh(`fusermount -uz '${mnt}'`);
      await child.stop('SIGKILL');
    });
    await child.waitFor(/"msg":"mounted /, 30_000);
    expect(child.output()).toMatch(/"msg":"the cache directory has only 1 MiB free: changing an existing file needs a local copy/);
    expect(await child.stop('SIGTERM', 20_000)).toBe(0);

    await sh(`dd if=/dev/zero of='${cache}/fill' bs=64k status=none || true`);
    const full = runEstuary(['mount', 'small', mnt, '--endpoint', s3.endpoint, '--cache-dir', cache, '--write-back'], serverEnv(s3));
    expect(await full.exited).toBe(2);
    expect(full.output()).toMatch(/cannot use cache directory .*: its file system is full .*; free space there, or give a --cache-dir on another file system/);
  }, 60_000);
});
