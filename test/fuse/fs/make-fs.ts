// A Filesystem over any ObjectClient with small, test-friendly sizes.

import { Filesystem, type FilesystemOptions } from '../../../fuse/fs/filesystem.ts';
import type { ObjectClient } from '../../../fuse/s3/object-client.ts';
import { tempDir } from '../../helpers/tmp.ts';

export const MiB = 2 ** 20;

export const quietLog = { error: () => {}, warn: () => {}, debug: () => {} };

export async function makeFs(
  client: ObjectClient,
  overrides: Partial<FilesystemOptions> = {},
): Promise<Filesystem> {
  const fs = new Filesystem({
    client,
    prefix: '',
    readOnly: false,
    defaults: { uid: 1000, gid: 1000, fileMode: 0o644, dirMode: 0o755 },
    cacheTtlMs: 60_000,
    memoryLimit: 64 * MiB,
    cacheDir: await tempDir('estuary-fs-cache-'),
    stagingLimit: 64 * MiB,
    firstPartSize: 5 * MiB,
    maxInFlight: 4,
    maxReadahead: 16 * MiB,
    renameDirLimit: 100,
    memoryWaitMs: 200,
    log: quietLog,
    ...overrides,
  });
  await fs.start();
  return fs;
}

/** Writes `data` through create/write/flush/release in 128 KiB writes, as the kernel would. */
export async function writeFile(fs: Filesystem, path: string, data: Buffer, mode = 0o644): Promise<void> {
  const fh = await fs.create(path, mode);
  try {
    for (let at = 0; at < data.length; at += 128 * 1024) {
      await fs.write(fh, data.subarray(at, Math.min(data.length, at + 128 * 1024)), at);
    }
    await fs.flush(fh);
  } finally {
    await fs.release(fh);
  }
}

export async function readFile(fs: Filesystem, path: string): Promise<Buffer> {
  return readOpened(fs, await fs.open(path, 0));
}

/** Reads an open handle from start to end in 128 KiB reads, as the kernel would, then releases it. */
export async function readOpened(fs: Filesystem, fh: number): Promise<Buffer> {
  try {
    const parts: Buffer[] = [];
    for (let at = 0; ; ) {
      const b = await fs.read(fh, at, 128 * 1024);
      if (b.length === 0) break;
      parts.push(b);
      at += b.length;
    }
    return Buffer.concat(parts);
  } finally {
    await fs.release(fh);
  }
}
