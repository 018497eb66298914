// Attack: `aws s3 cp` and boto3's download_file of a 40 MiB object through a gateway with default
// block settings whose --disk-cache cannot hold every block in flight (12 MiB here; the same
// happens when the cache disk is full: fills then pass through unstored).
//
// A block fill that cannot be stored passes; the block read then falls back to the whole-object
// way (blocks.ts serveBlocks -> handler.ts #cached), whose fill cannot be stored either, and its
// leader relays the store's whole 200 to a ranged GET (handler.ts #fromFill, state 'pass').
// The downloader writes that whole object at its part's offset and exits 0.
// Expected: every download that exits 0 holds exactly the object (and a ranged GET gets a 206).

import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { awscli, boto3, boto3Python } from '../helpers/s3-clients.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct } from './s3-harness.ts';

afterAll(runTeardowns);

const python = await boto3Python();
const MiB = 2 ** 20;
const md5 = (b: string | Buffer) => createHash('md5').update(b).digest('hex');

describe('ranged downloads through a cache that cannot store their blocks', () => {
  it('never exit 0 with a wrong file', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const g = await startS3Gw(store, ['--disk-cache', '12MiB']);
    const cred = await g.issue(`${BUCKET}/run42/`);
    const dir = await tempDir('estuary-atk-map6-');
    const results: string[] = [];
    for (let i = 0; i < 4; i++) {
      const key = `run42/big-${i}.bin`;
      const body = Buffer.alloc(40 * MiB, `small-disk-${i}-0123456789abcdef`);
      expect((await direct(store, 'PUT', `/${BUCKET}/${key}`, body.toString())).status).toBe(200);
      if (python) {
        const out = join(dir, `boto3-${i}.bin`);
        const res = await boto3(python, g.gw, cred, 'download', key, out);
        const got = res.ok ? await readFile(out) : undefined;
        results.push(`boto3 ${JSON.stringify(res)} ${got?.length} ${got ? md5(got) === md5(body) : ''}`);
      }
      const out2 = join(dir, `awscli-${i}.bin`);
      await writeFile(out2, '');
      const cli = await awscli(g.gw, cred, ['s3', 'cp', `s3://${BUCKET}/${key}`, out2]);
      const got2 = await readFile(out2);
      results.push(`awscli ${cli.code} ${got2.length} ${md5(got2) === md5(body)}`);
    }
    const wrong = results.filter((r) => (r.startsWith('boto3 {"ok":true}') || r.startsWith('awscli 0 ')) && !r.endsWith(` ${40 * MiB} true`));
    expect(wrong, results.join('\n')).toEqual([]);
  }, 240_000);
});
