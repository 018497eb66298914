// Ctrl-C (SIGINT) is promised to stop a copy within --shutdown-timeout: "parts and smaller files
// in flight finish, for at most --shutdown-timeout (10 s), after which they are cut", then one line
// and exit 130. Requests that carry no abort signal are not cut: the destination listing of
// `stage out` and the GET (before its body) and HEAD of `stage in`. Against a store that has
// stopped answering, the run goes on after the deadline until the SDK's own retries give up
// (5 attempts × --timeout: 2.5 min with the default 30 s); seen still running 40 s after SIGINT
// with --shutdown-timeout 3s. The SHA-256 pass of `stage out` is not cut either: a large file is
// read to its end after Ctrl-C (here a 32 GiB sparse file, tens of seconds).

import { afterAll, describe, expect, it } from 'vitest';
import { truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { type Req, startFakeS3 } from './stage-fake-s3.ts';
import { stageChild } from './stage-run.ts';

afterAll(runTeardowns);

/** Starts stage, waits until the store holds a request matching `stall` (never answered), sends SIGINT, and returns the exit status within `withinMs` (or 'still running'). */
async function interruptWhileStalled(args: (endpoint: string) => Promise<string[]>, objects: [string, Buffer][], stall: (r: Req) => boolean, withinMs: number, afterListing = false) {
  const s3 = await startFakeS3(new Map(objects.map(([k, body]) => [k, { body, sha256: true }])));
  let held = 0;
  s3.hook = (req) => {
    if (afterListing && req.url.searchParams.get('list-type') === '2') held++;
    return stall(req) && (held++, true);
  };
  const child = stageChild([...(await args(s3.endpoint)), '--shutdown-timeout', '3s']);
  const end = Date.now() + 20_000;
  while (held === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  if (afterListing) await new Promise((r) => setTimeout(r, 1000)); // well into the hashing pass
  child.proc.kill('SIGINT');
  const code = await Promise.race([child.exited, new Promise<string>((r) => setTimeout(() => r('still running'), withinMs))]);
  await child.stop('SIGKILL');
  return { held, code };
}

describe('stage: Ctrl-C against a store that stopped answering', () => {
  it('stage out with its destination listing unanswered exits 130 within the shutdown timeout', async () => {
    const src = await tempDir();
    await writeFile(join(src, 'a'), 'a');
    const r = await interruptWhileStalled(async (ep) => ['out', src, 's3://bkt/p/', '--endpoint', ep, '--state-dir', await tempDir()], [], (req) => req.url.searchParams.get('list-type') === '2', 10_000);
    expect(r).toEqual({ held: 1, code: 130 });
  });

  it('stage in with a GET unanswered exits 130 within the shutdown timeout', async () => {
    const r = await interruptWhileStalled(
      async (ep) => ['in', 's3://bkt/p/', join(await tempDir(), 'd'), '--endpoint', ep, '--state-dir', await tempDir()],
      [['p/a', Buffer.from('x')]],
      (req) => req.method === 'GET' && req.key === 'p/a',
      10_000,
    );
    expect(r).toEqual({ held: 1, code: 130 });
  });

  it('stage out hashing a large file exits 130 within the shutdown timeout', async () => {
    const src = await tempDir();
    await writeFile(join(src, 'huge.bin'), '');
    await truncate(join(src, 'huge.bin'), 32 * 2 ** 30); // sparse: no disk used, read as zeros
    const r = await interruptWhileStalled(
      async (ep) => ['out', src, 's3://bkt/p/', '--endpoint', ep, '--state-dir', await tempDir()],
      [],
      () => false, // every request answered; SIGINT comes 1 s after the listing, during the hashing pass
      10_000,
      true,
    );
    expect(r.code).toBe(130);
  });
});
