// Attack: ranged reads (boto3's download_file, awscli's `s3 cp`, a plain ranged GetObject) of an
// object the gateway will not store because it is larger than --max-object-size, with blocks off
// (`--s3-block-size 0`, documented as "fetch the whole object") — or simply an object between
// --max-object-size and --s3-block-size.
//
// Such a range takes the whole-object way (docs/STAGING.md): the fill drops the client's Range,
// the store's 200 may not be stored (too-large), the fill "passes", and its leader relays the
// store's whole 200 to a client that asked for 100 bytes (handler.ts #fromFill, state 'pass').
// S3 and every store answer 206 with the range. boto3's download_file and `aws s3 cp` split the
// object into 8 MiB ranges; the part whose GET arrives first gets the whole object and writes it
// at its offset: measured with a 40 MiB object, boto3 exited 0 with files of 56-72 MiB in 5 of 6
// runs, awscli in 2 of 6 (exit status 0 both).
// Expected: 206 with exactly the bytes asked for; download_file and `aws s3 cp` that exit 0 hold
// exactly the object.

import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { awscli, boto3, boto3Python } from '../helpers/s3-clients.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct, send } from './s3-harness.ts';

afterAll(runTeardowns);

const python = await boto3Python();
const MiB = 2 ** 20;
const text = (n: number, seed: string) => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);
const md5 = (b: string | Buffer) => createHash('md5').update(b).digest('hex');

describe('ranges of an object over --max-object-size', () => {
  for (const flags of [['--s3-block-size', '0', '--max-object-size', '4MiB'], ['--max-object-size', '4MiB']]) {
    it(`are answered with the range (${flags.join(' ')})`, async () => {
      const store = await startS3rver({ buckets: [BUCKET] });
      const g = await startS3Gw(store, flags);
      const cred = await g.issue(`${BUCKET}/run42/`);
      const key = 'run42/big.txt';
      const size = flags.includes('0') ? 40 * MiB : 6 * MiB;
      const body = text(size, 'too-large-for-the-cache-0123456789abcdefghij-');
      expect((await direct(store, 'PUT', `/${BUCKET}/${key}`, body)).status).toBe(200);
      const r = await send(g.gw, cred, 'GET', `/${BUCKET}/${key}`, { headers: { range: 'bytes=100-199' } });
      expect.soft(`${r.status} ${r.body.length}`, String(r.headers['cache-status'])).toBe('206 100');
      expect.soft(r.body === body.slice(100, 200)).toBe(true);
      // The first ranged GET to arrive leads the fill and gets the whole 200; the others join it
      // and are passed with their range. When the leader is not the part at offset 0, the
      // downloader writes a whole object at that part's offset: a longer file, exit status 0.
      const dir = await tempDir('estuary-atk-map6-');
      const results: string[] = [];
      for (let i = 0; i < 6; i++) {
        if (python) {
          const out = join(dir, `boto3-${i}.bin`);
          const res = await boto3(python, g.gw, cred, 'download', key, out);
          const got = res.ok ? await readFile(out) : undefined;
          results.push(`boto3 ${JSON.stringify(res)} ${got?.length} ${got ? md5(got) : ''}`);
        }
        const out2 = join(dir, `awscli-${i}.bin`);
        await writeFile(out2, '');
        const cli = await awscli(g.gw, cred, ['s3', 'cp', `s3://${BUCKET}/${key}`, out2]);
        const got2 = await readFile(out2);
        results.push(`awscli ${cli.code} ${got2.length} ${md5(got2)}`);
      }
      // A download may fail (then it is retried); one that exits 0 must hold the object.
      const wrong = results.filter((r) => (r.startsWith('boto3 {"ok":true}') || r.startsWith('awscli 0 ')) && !r.endsWith(` ${size} ${md5(body)}`));
      expect.soft(wrong, results.join('\n')).toEqual([]);
    }, 120_000);
  }
});
