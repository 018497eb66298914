// Local side of the copies: writing the datasets (random bytes, so no layer can compress or
// deduplicate them), checksumming, timing `cp`, and dropping the page cache between runs.

import { createHash, randomFillSync } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { lastLine, runCommand } from '../proc.ts';
import type { Dataset } from './datasets.ts';

export interface FileSum {
  readonly name: string;
  readonly bytes: number;
  readonly sha256: string;
}

export interface LocalDataset {
  readonly dataset: Dataset;
  readonly dir: string;
  readonly files: readonly FileSum[];
}

/** Written 1 MiB at a time: bounded memory whatever the file size. */
const WRITE_CHUNK = 1024 * 1024;

export function fileName(i: number): string {
  return `file${String(i).padStart(4, '0')}.bin`;
}

async function writeRandomFile(path: string, bytes: number): Promise<string> {
  const hash = createHash('sha256');
  const fh = await open(path, 'w');
  try {
    const buf = Buffer.allocUnsafe(Math.min(WRITE_CHUNK, Math.max(bytes, 1)));
    for (let done = 0; done < bytes; ) {
      const n = Math.min(buf.length, bytes - done);
      randomFillSync(buf, 0, n);
      hash.update(buf.subarray(0, n));
      await fh.write(buf, 0, n);
      done += n;
    }
  } finally {
    await fh.close();
  }
  return hash.digest('hex');
}

export async function makeDataset(root: string, dataset: Dataset): Promise<LocalDataset> {
  const dir = join(root, dataset.label);
  await mkdir(dir, { recursive: true });
  const files: FileSum[] = [];
  for (let i = 0; i < dataset.files; i++) {
    const name = fileName(i);
    files.push({
      name,
      bytes: dataset.fileBytes,
      sha256: await writeRandomFile(join(dir, name), dataset.fileBytes),
    });
  }
  return { dataset, dir, files };
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: WRITE_CHUNK }))
    hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Every expected file present in `dir` with the same bytes; returns the first problem found. */
export async function verifyCopy(dir: string, expected: readonly FileSum[]): Promise<string | undefined> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    return `copy missing: ${(err as Error).message}`;
  }
  if (names.length !== expected.length) return `copy has ${names.length} files, expected ${expected.length}`;
  for (const f of expected) {
    const sum = await sha256File(join(dir, f.name)).catch((e: Error) => e.message);
    if (sum !== f.sha256) return `checksum mismatch on ${f.name}`;
  }
  return undefined;
}

/** Runs `cp -r src dst` and returns its wall time in seconds; throws with cp's message on failure. */
export async function timedCopy(src: string, dst: string, signal?: AbortSignal): Promise<number> {
  const t0 = performance.now();
  // Aborting (SIGINT) stops cp at once instead of waiting out a copy that may take minutes.
  const r = await runCommand('cp', ['-r', src, dst], signal ? { signal } : {});
  const seconds = (performance.now() - t0) / 1000;
  if (r.code !== 0) throw new Error(`cp failed: ${lastLine(r.output) || `exit ${r.code}`}`);
  return seconds;
}

/**
 * Flushes dirty pages and drops the page, dentry and inode caches, so a "down" copy reads from
 * S3 and not from memory left by the "up" copy. Returns false where the kernel does not allow it
 * (not root, or a container without /proc/sys write access); the caller notes that once.
 */
export async function dropCaches(): Promise<boolean> {
  await runCommand('sync', []);
  try {
    await writeFile('/proc/sys/vm/drop_caches', '3\n');
    return true;
  } catch {
    return false;
  }
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
