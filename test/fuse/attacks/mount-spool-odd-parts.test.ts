// Part sizes that are not a multiple of the 4 KiB direct-I/O block (`--part-size` takes any size
// from 5 MiB): each part after the first then starts mid-block, so the local copy mixes direct
// writes of whole blocks with page-cache writes of the partial blocks on either side
// (StagingFile.writeThrough). Expected, as for any part size: a file written out of order reaches
// the bucket byte for byte (docs/SEMANTICS.md, "write, everything else").

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

describe.runIf(fuse.ok)('mount: the local copy with part sizes off the 4 KiB grid', () => {
  for (const size of ['5242881', '5246975', '5767168']) {
    it(`--part-size ${size}: out-of-order writes arrive whole`, async () => {
      const server = await startS3rver({ buckets: ['data'] });
      const m = await mountBucket(server, 'data', ['--cache-dir', await tempDir('estuary-cache-'), '--part-size', size]);
      const refs = await tempDir('estuary-refs-');
      for (const p of ['seekback:4097', 'truncate-across', 'readback']) {
        const name = p.replace(':', '-');
        const r = await sh(`python3 '${SCRIPT}' '${m.dir}/${name}' '${refs}/${name}' '${p}'`);
        expect(r.code, r.out).toBe(0);
        const want = await readFile(`${refs}/${name}`);
        const got = await s3Client(server)
          .send(new GetObjectCommand({ Bucket: 'data', Key: name }))
          .then(async (o) => Buffer.from(await o.Body!.transformToByteArray()));
        expect(`${p}: ${got.length} ${md5(got)}`).toBe(`${p}: ${want.length} ${md5(want)}`);
      }
    }, 40_000);
  }
});
