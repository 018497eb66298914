// A store whose listing never ends without listing an object: every page IsTruncated with the
// same continuation token (a token loop) and no object in it (only a directory marker, which
// stage skips). `--max-objects` counts objects, so it never trips, and `--timeout` is an idle
// timeout that a prompt answer never trips either: `stage in` asks for page after page (about a
// thousand a second on loopback) for ever. A continuation token seen before is a loop, and a run
// must end with one line and a documented status rather than hammer the store without end.

import { afterAll, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { listXml, startFakeS3 } from './stage-fake-s3.ts';
import { stage, stageChild } from './stage-run.ts';

afterAll(runTeardowns);

describe('stage: a listing that loops without objects', () => {
  it('stage in stops when the store repeats its continuation token', async () => {
    const s3 = await startFakeS3();
    let pages = 0;
    s3.hook = (req, res) => {
      if (req.url.searchParams.get('list-type') !== '2') return false;
      pages++;
      res.writeHead(200, { 'content-type': 'application/xml' }).end(listXml([{ key: 'p/dir/', size: 0, etag: '"x"' }], 'same-token'));
      return true;
    };
    const child = stageChild(['in', 's3://bkt/p/', join(await tempDir(), 'd'), '--endpoint', s3.endpoint, '--state-dir', await tempDir(), '--timeout', '2s']);
    const ended = await Promise.race([child.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 10_000))]);
    const seen = pages;
    await child.stop('SIGKILL');
    expect({ ended, pagesBelow: seen < 100 }).toEqual({ ended: true, pagesBelow: true });
    expect(await child.exited).toBe(2);
  });

  it('stage out stops when the destination listing repeats its continuation token', async () => {
    const s3 = await startFakeS3();
    s3.hook = (req, res) => {
      if (req.url.searchParams.get('list-type') !== '2') return false;
      res.writeHead(200, { 'content-type': 'application/xml' }).end(listXml([], 'same-token'));
      return true;
    };
    const src = await tempDir();
    await writeFile(join(src, 'a'), 'a');
    const r = await Promise.race([
      stage(['out', src, 's3://bkt/p/', '--endpoint', s3.endpoint, '--state-dir', await tempDir(), '--timeout', '2s']),
      new Promise<undefined>((r) => setTimeout(() => r(undefined), 10_000)),
    ]);
    expect(r?.code).toBeDefined();
  });
});
