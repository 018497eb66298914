// Two `stage in` runs on one destination at once (a job array whose tasks stage the same inputs,
// or a user who starts the same command twice). Both download one key into the same partial file
// name; the second removes the first's partial file and creates its own. The first, when its body
// ends, checks the size of whatever file is now under that name and renames it to the final name:
// it publishes the other run's bytes, which nobody verified. Here the second run receives bytes
// that do not match the object's SHA-256 (and would refuse them itself), but the first run renames
// them into place and reports success. The promise: no file under a final name ever holds bytes
// that are not exactly one object's verified bytes.

import { afterAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { sha256, startFakeS3 } from './stage-fake-s3.ts';
import { stageChild } from './stage-run.ts';

afterAll(runTeardowns);

async function waitFor(fn: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('stage in: two runs on one destination', () => {
  it('never renames bytes it did not verify into a final name', async () => {
    const N = 256 * 1024;
    const body = randomBytes(N);
    const corrupt = randomBytes(N);
    const etag = `"${'c'.repeat(32)}-1"`; // a multipart ETag: the recorded SHA-256 is the only check
    const headers = { etag, 'x-amz-meta-sha256': sha256(body) };
    const s3 = await startFakeS3(new Map([['p/f.bin', { body, sha256: true, etag }]]));
    const held: ServerResponse[] = [];
    let gets = 0;
    s3.hook = (req, res) => {
      if (req.method !== 'GET' || req.key !== 'p/f.bin') return false;
      gets++;
      if (gets === 1) {
        // Run A: half of the right bytes, then wait.
        res.writeHead(200, { ...headers, 'content-length': String(N) });
        res.write(body.subarray(0, N / 2));
        held[0] = res;
      } else if (gets === 2) {
        // Run B: N wrong bytes under the same ETag and SHA-256, and one more announced.
        res.writeHead(200, { ...headers, 'content-length': String(N + 1) });
        res.write(corrupt);
        held[1] = res;
      } else {
        res.writeHead(404, { 'content-type': 'application/xml' }).end('<Error><Code>NoSuchKey</Code></Error>');
      }
      return true;
    };
    const dest = join(await tempDir(), 'dest');
    const args = (state: string) => ['in', 's3://bkt/p/', dest, '--endpoint', s3.endpoint, '--state-dir', state, '--timeout', '5s'];
    const partial = () => `${join(dest, 'f.bin')}.${sha256('p/f.bin').slice(0, 12)}.estuary-partial`;
    const size = () => stat(partial()).then((s) => s.size, () => -1);
    // One user's two runs (a cron job overlapping itself) share the state directory, where the
    // destination's lock lives; runs with other state directories are the next test's case.
    const state = await tempDir();
    const a = stageChild(args(state));
    await waitFor(async () => (await size()) >= N / 2);
    const b = stageChild(args(state));
    let bEnded = false;
    void b.exited.then(() => (bEnded = true));
    // B either refuses at once (the destination is locked) or gets as far as replacing A's partial file.
    await waitFor(async () => bEnded || (gets >= 2 && (await size()) === N));
    held[0]!.end(body.subarray(N / 2)); // A's body completes
    await a.exited;
    held[1]?.destroy();
    expect(await b.exited).toBe(2);
    expect(b.output()).toMatch(/is being written by another estuary stage \(process \d+\)/);
    expect(await a.exited).toBe(0);
    const final = await readFile(join(dest, 'f.bin')).catch(() => undefined);
    // Either no file (nobody verified one) or exactly the object's bytes.
    if (final !== undefined) expect(sha256(final)).toBe(sha256(body));
  });

  // Where the lock cannot be taken (a file system without record locks), or against any other
  // process: the partial file replaced under a running download is never published.
  it('does not rename a partial file another process put under that name', async () => {
    const N = 256 * 1024;
    const body = randomBytes(N);
    const etag = `"${'c'.repeat(32)}-1"`;
    const s3 = await startFakeS3(new Map([['p/f.bin', { body, sha256: true, etag }]]));
    let held: ServerResponse | undefined;
    s3.hook = (req, res) => {
      if (req.method !== 'GET' || req.key !== 'p/f.bin') return false;
      res.writeHead(200, { etag, 'x-amz-meta-sha256': sha256(body), 'content-length': String(N) });
      res.write(body.subarray(0, N / 2));
      held = res;
      return true;
    };
    const dest = join(await tempDir(), 'dest');
    const partial = `${join(dest, 'f.bin')}.${sha256('p/f.bin').slice(0, 12)}.estuary-partial`;
    const a = stageChild(['in', 's3://bkt/p/', dest, '--endpoint', s3.endpoint, '--state-dir', await tempDir(), '--timeout', '5s']);
    await waitFor(async () => (await stat(partial).then((s) => s.size, () => -1)) >= N / 2);
    await rm(partial);
    await writeFile(partial, randomBytes(N)); // the full size, other bytes
    held!.end(body.subarray(N / 2));
    expect(await a.exited).toBe(1);
    expect(a.output()).toMatch(/the partial file was replaced by another process/);
    expect(await readFile(join(dest, 'f.bin')).catch(() => undefined)).toBeUndefined();
  });
});
