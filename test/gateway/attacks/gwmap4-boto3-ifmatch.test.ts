// Attack: boto3's download_file through the gateway while the object is replaced at the store
// writes a file that mixes the two versions, and reports success.
//
// s3transfer (boto3's downloader, also awscli's) reads an object larger than its threshold in
// ranges, each with `If-Match: <ETag of the HeadObject>` so that a replacement fails the download
// (S3 answers 412) instead of splicing versions; docs/STAGING.md relies on it ("A range with
// `If-Match` on that version (boto3's `download_file` sends one with every range it reads)").
// The gateway answers ranges of a cached object from the cache and ignores If-Match: once its
// entry is replaced (after --s3-revalidate), the remaining ranges come from the new version.
//
// Expected: the download either fails (412 PreconditionFailed) or yields one version whole; never
// a file that is neither, with exit status 0.

import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { sleep } from './gateway-lib.ts';
import { until } from './gwindex2-lib.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct, send } from './s3-harness.ts';

afterAll(runTeardowns);

const MIB = 2 ** 20;
const text = (n: number, seed: string) => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);
const KEY = 'run42/ranged.bin';

// Ranges of 1 MiB, one at a time; the first progress callback waits for the test's `go` file.
const SCRIPT = `
import os, sys, time, boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
gw, bucket, key, out, go = sys.argv[1:6]
s3 = boto3.client('s3', endpoint_url=gw, region_name='us-east-1',
                  config=Config(s3={'addressing_style': 'path'}, retries={'max_attempts': 1}))
state = {'waited': False}
def progress(n):
    if not state['waited']:
        state['waited'] = True
        print('STARTED', flush=True)
        while not os.path.exists(go):
            time.sleep(0.05)
cfg = TransferConfig(multipart_threshold=1024*1024, multipart_chunksize=1024*1024, max_concurrency=1, use_threads=True)
try:
    s3.download_file(bucket, key, out, Config=cfg, Callback=progress)
    print('DOWNLOADED', flush=True)
except Exception as e:
    print('FAILED', type(e).__name__, str(e)[:200], flush=True)
    sys.exit(3)
`;

describe('boto3 download_file through the gateway while the object is replaced', () => {
  it('never yields a file mixing two versions', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const g = await startS3Gw(store, ['--s3-revalidate', '1s', '--s3-block-size', '0']);
    const cred = await g.issue(`${BUCKET}/run42/`);
    const v1 = text(4 * MIB, 'version-ONE-');
    const v2 = text(4 * MIB, 'version-TWO-');
    expect((await direct(store, 'PUT', `/${BUCKET}/${KEY}`, v1)).status).toBe(200);
    expect((await send(g.gw, cred, 'GET', `/${BUCKET}/${KEY}`)).body).toBe(v1);

    const script = join(g.dir, 'dl.py');
    const out = join(g.dir, 'out.bin');
    const go = join(g.dir, 'go');
    writeFileSync(script, SCRIPT);
    let stdout = '';
    const done = new Promise<number>((resolve) => {
      const p = execFile('python3', [script, g.gw, BUCKET, KEY, out, go], {
        env: { ...process.env, AWS_ACCESS_KEY_ID: cred.accessKeyId, AWS_SECRET_ACCESS_KEY: cred.secretAccessKey, AWS_SESSION_TOKEN: cred.sessionToken, AWS_CONFIG_FILE: '/dev/null', AWS_SHARED_CREDENTIALS_FILE: '/dev/null' },
        timeout: 30_000,
      }, (err) => resolve(err ? Number((err as { code?: number }).code ?? 1) : 0));
      p.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
      p.stderr?.on('data', (d: Buffer) => (stdout += d.toString()));
    });
    expect(await until(() => stdout.includes('STARTED') || stdout.includes('FAILED'), 20_000), stdout).toBe(true);
    // Replaced at the store while the first range is being read; the gateway revalidates after 1 s.
    expect((await direct(store, 'PUT', `/${BUCKET}/${KEY}`, v2)).status).toBe(200);
    await sleep(1500);
    writeFileSync(go, '');
    const code = await done;
    if (code === 0) {
      expect(existsSync(out)).toBe(true);
      const got = readFileSync(out, 'latin1');
      const ones = (got.match(/version-ONE-/g) ?? []).length;
      const twos = (got.match(/version-TWO-/g) ?? []).length;
      expect(ones > 0 && twos > 0, `download_file succeeded with a file of both versions (${ones}x ONE, ${twos}x TWO)`).toBe(false);
      expect(got === v1 || got === v2).toBe(true);
    } else {
      expect(stdout).toMatch(/FAILED/);
    }
  }, 45_000);
});
