// A Filesystem over the in-memory client whose cache directory sits on a tiny tmpfs of its own,
// so the local copy of a streamed part cannot be written (ENOSPC) and a flush publishes the file
// without one: the "go on after a flush without a local copy" path (docs/SEMANTICS.md,
// ESTUARY_FS_COPY_DROPPED). Root only (mounts a tmpfs).

import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Filesystem } from '../../../fuse/fs/filesystem.ts';
import type { ObjectClient } from '../../../fuse/s3/object-client.ts';
import { onTeardown } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';

export const MiB = 2 ** 20;

export interface Warned {
  readonly obj: Record<string, unknown>;
  readonly msg: string;
}

/** A tmpfs of `bytes` mounted on a fresh directory, unmounted after the file. */
export async function tinyDisk(bytes: number): Promise<string> {
  const dir = await tempDir('estuary-append-');
  const mnt = join(dir, 'disk');
  await mkdir(mnt);
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', mnt]);
  onTeardown(() => {
    execFileSync('umount', ['-l', mnt]);
  });
  return mnt;
}

export interface FsOnFullDisk {
  readonly fs: Filesystem;
  readonly warned: Warned[];
  /** The tmpfs the cache directory is on. */
  readonly disk: string;
}

/**
 * Makes the running filesystem's staging directories read-only (as ext4 turns itself read-only
 * after an error): a read-only tmpfs mounted over each, so every new staging file gets EROFS.
 * (A remount of the tmpfs itself is refused while the staging lock is held open for writing.)
 */
export function turnReadOnly(disk: string): void {
  const cache = join(disk, 'cache');
  for (const name of readdirSync(cache).filter((n) => n.startsWith('staging-'))) {
    const dir = join(cache, name);
    if (!statSync(dir).isDirectory()) continue;
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', dir]);
    onTeardown(() => {
      execFileSync('umount', ['-l', dir]);
    });
  }
}

export async function fsOnFullDisk(
  client: ObjectClient,
  o: { firstPartSize?: number; maxInFlight?: number; memoryLimit?: number; stagingLimit?: number; diskBytes?: number } = {},
): Promise<FsOnFullDisk> {
  const disk = await tinyDisk(o.diskBytes ?? 256 * 1024);
  const warned: Warned[] = [];
  const log = {
    error: (obj: object, msg: string) => warned.push({ obj: obj as Record<string, unknown>, msg }),
    warn: (obj: object, msg: string) => warned.push({ obj: obj as Record<string, unknown>, msg }),
    debug: () => undefined,
  };
  const fs = new Filesystem({
    client,
    prefix: '',
    readOnly: false,
    defaults: { uid: 0, gid: 0, fileMode: 0o644, dirMode: 0o755 },
    cacheTtlMs: 1000,
    memoryLimit: o.memoryLimit ?? 512 * MiB,
    cacheDir: join(disk, 'cache'),
    stagingLimit: o.stagingLimit ?? 10 * 2 ** 30,
    firstPartSize: o.firstPartSize ?? 16 * MiB,
    maxInFlight: o.maxInFlight ?? 4,
    maxReadahead: 8 * MiB,
    renameDirLimit: 1000,
    memoryWaitMs: 1000,
    log,
  } as ConstructorParameters<typeof Filesystem>[0]);
  await fs.start();
  onTeardown(() => fs.stop());
  return { fs, warned, disk };
}

/** Deterministic bytes for [start, start+n): each byte tells where it belongs. */
export function bytesAt(start: number, n: number, salt = 0): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) {
    const at = start + i;
    b[i] = (at * 31 + Math.floor(at / 65536) * 7 + salt) & 0xff;
  }
  return b;
}

/** Writes [from, to) in 1 MiB writes, as `cp` would. */
export async function writeRange(fs: Filesystem, fh: number, from: number, to: number, salt = 0): Promise<void> {
  for (let at = from; at < to; at += MiB) {
    const n = Math.min(MiB, to - at);
    await fs.write(fh, bytesAt(at, n, salt), at);
  }
}
