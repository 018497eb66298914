// Two mounts sharing one --cache-dir, many files written at once through each, with writes out
// of order that move files to their local copies (docs/SEMANTICS.md, "write, everything else").
// A third mount started on the same cache directory while they write must leave the running
// mounts' staging files alone (fuse/fs/leftovers.ts: only the directories of dead mounts go), and
// every file must reach the bucket byte for byte.

import { GetObjectCommand } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { s3Client } from '../../helpers/s3-smoke.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);

const SCRIPT = new URL('./mount-spool-patterns.py', import.meta.url).pathname;
const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');
const fuse = fuseAvailable();

describe.runIf(fuse.ok)('mount: two mounts on one cache directory, many files at once', () => {
  it('every file arrives whole, and a third start removes none of the running mounts’ copies', async () => {
    const server = await startS3rver({ buckets: ['data'] });
    const cache = await tempDir('estuary-cache-');
    const args = ['--cache-dir', cache, '--part-size', '5MiB', '--memory-limit', '256MiB'];
    const a = await mountBucket(server, 'data', args);
    const b = await mountBucket(server, 'data', args);
    const refs = await tempDir('estuary-refs-');
    const jobs: Promise<{ code: number; out: string }>[] = [];
    const names: string[] = [];
    const patterns = ['seekback:4095', 'truncate-across', 'readback', 'seekback:5242881'];
    for (const [i, m] of [a, b].entries()) {
      for (const [j, p] of patterns.entries()) {
        const name = `m${i}-${j}`;
        names.push(name);
        jobs.push(sh(`python3 '${SCRIPT}' '${m.dir}/${name}' '${refs}/${name}' '${p}'`));
      }
    }
    // While they write, a third mount starts on the same cache directory and cleans leftovers.
    await new Promise((r) => setTimeout(r, 1500));
    await mountBucket(server, 'data', args);
    const results = await Promise.all(jobs);
    for (const [k, r] of results.entries()) expect(r.code, `${names[k]}: ${r.out}`).toBe(0);
    const s3 = s3Client(server);
    for (const name of names) {
      const want = await readFile(`${refs}/${name}`);
      const got = await s3
        .send(new GetObjectCommand({ Bucket: 'data', Key: name }))
        .then(async (o) => Buffer.from(await o.Body!.transformToByteArray()));
      expect(`${name}: ${got.length} ${md5(got)}`).toBe(`${name}: ${want.length} ${md5(want)}`);
    }
  }, 60_000);
});
