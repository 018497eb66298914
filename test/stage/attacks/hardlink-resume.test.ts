// `stage in` resumes a journalled partial download by opening NAME.<hash>.estuary-partial with
// O_RDWR|O_NOFOLLOW and writing after its current size. O_NOFOLLOW stops a symlink, and the
// /proc/self/fd check sees the path inside the destination, but neither stops a hard link: when
// the partial file is a hard link to a file outside the destination (planted by whoever can write
// in the destination, or left by a tool that links trees), the rerun appends the object's bytes to
// that outside file. The promise: nothing is ever written outside the destination.

import { afterAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { link, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { sha256, startFakeS3 } from './stage-fake-s3.ts';
import { stage, stageChild } from './stage-run.ts';

afterAll(runTeardowns);

const MiB = 2 ** 20;

async function waitFor<T>(fn: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('stage in: a partial file that is a hard link', () => {
  it('resuming never writes into a file outside the destination', async () => {
    const body = randomBytes(6 * MiB);
    const s3 = await startFakeS3(new Map([['p/big.bin', { body, sha256: true }]]));
    // First run: half the body, then silence; killed -9 with a journalled partial file.
    s3.hook = (req, res) => {
      if (req.method !== 'GET' || req.key !== 'p/big.bin') return false;
      res.writeHead(200, { etag: `"${'a'.repeat(32)}-2"`, 'content-length': String(body.length), 'x-amz-meta-sha256': sha256(body) });
      res.write(body.subarray(0, MiB));
      return true; // never ends
    };
    const root = await tempDir();
    const dest = join(root, 'dest');
    const state = await tempDir();
    const args = ['in', 's3://bkt/p/', dest, '--endpoint', s3.endpoint, '--state-dir', state, '--part-size', '5MiB'];
    const first = stageChild(args);
    const partial = await waitFor(async () => {
      const names = await readdir(dest).catch(() => []);
      const p = names.find((n) => n.endsWith('.estuary-partial'));
      if (!p) return undefined;
      return (await stat(join(dest, p))).size >= MiB ? join(dest, p) : undefined;
    });
    await first.stop('SIGKILL');
    // Someone replaces the partial file with a hard link to a file outside the destination.
    const outside = join(root, 'outside.txt');
    const precious = 'precious data outside the destination\n';
    await writeFile(outside, precious);
    await rm(partial);
    await link(outside, partial);
    // The store now serves the object as the first run saw it (same ETag), honouring ranges.
    s3.hook = undefined;
    s3.objects.set('p/big.bin', { body, sha256: true, etag: `"${'a'.repeat(32)}-2"` });
    await stage(args);
    const after = await readFile(outside);
    expect({ size: after.length, sha256: sha256(after) }).toEqual({ size: precious.length, sha256: sha256(precious) });
  });
});
