// Replacing a file so that a reader (a CVMFS client reloading its config, or cron running twice)
// sees either the old or the new content, never a half-written file: write a temporary file in
// the same directory, flush it to disk, keep the old file's mode, then rename over the original.

import { randomBytes } from 'node:crypto';
import { open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export async function writeFileAtomic(path: string, content: string): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const mode = await stat(path).then(
    (s) => s.mode & 0o7777,
    () => 0o644,
  );
  const fh = await open(tmp, 'wx', mode);
  try {
    await fh.writeFile(content);
    await fh.sync();
    await fh.chmod(mode);
  } catch (err) {
    await fh.close();
    await rm(tmp, { force: true });
    throw err;
  }
  await fh.close();
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
