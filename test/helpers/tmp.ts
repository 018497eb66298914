import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTeardown } from './cleanup.ts';

/**
 * A fresh directory removed after the test file. The removal retries a directory that is not
 * empty yet: what a test started in its own process (a gateway whose stop() has resolved) may still
 * be finishing a file there while the directory is removed.
 */
export async function tempDir(prefix = 'estuary-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  onTeardown(() => rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }));
  return dir;
}
