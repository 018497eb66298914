import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTeardown } from './cleanup.ts';

/** A fresh directory removed after the test file. */
export async function tempDir(prefix = 'estuary-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  onTeardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}
