// Real clients page through listings of a prefix credential: boto3's paginators (V2 and V1, which
// ask for encoding-type=url and decode the answer), `aws s3 ls` (awscli from Debian) and rclone,
// from the bucket root and within the scope, against s3rver and Swift. The gateway writes these
// answers and their continuation tokens itself, so this is where a client would notice.

import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { issue } from '../../gateway/s3/credentials.ts';
import { runTeardowns } from '../helpers/cleanup.ts';
import { type S3Server, startS3rver } from '../helpers/s3rver.ts';
import { startSwift, swiftAvailable } from '../helpers/swift.ts';
import { tempDir } from '../helpers/tmp.ts';
import { BUCKET, gatewayOn, ISSUER, signed } from './helpers/s3-scope.ts';

afterAll(runTeardowns);

const run = promisify(execFile);
const root = new URL('../../', import.meta.url).pathname;
const venv = (await run('bash', [join(root, 'scripts/ensure-venv.sh'), 's3-clients', 'boto3==1.43.11'])).stdout.trim();

const IN = [...Array.from({ length: 23 }, (_, i) => `run42/k${String(i).padStart(3, '0')}`), 'run42/sub/a b', 'run42/sub/x+y', 'run42/p%2Fq'].sort();
const OUT = ['run420/x', 'run42-/y', 'secret', 'zzz/run42/q'];

const BOTO = `
import json, sys, boto3
from botocore.config import Config
ep, ak, sk, tok = sys.argv[1:5]
s3 = boto3.client('s3', endpoint_url=ep, aws_access_key_id=ak, aws_secret_access_key=sk, aws_session_token=tok,
                  region_name='us-east-1', config=Config(s3={'addressing_style': 'path'}, retries={'max_attempts': 1}))
out = {}
for name, op, kw in [('v2-root', 'list_objects_v2', {}), ('v2-scope', 'list_objects_v2', {'Prefix': 'run42/'}),
                     ('v1-root', 'list_objects', {}), ('v1-scope', 'list_objects', {'Prefix': 'run42/'})]:
    keys = []
    for page in s3.get_paginator(op).paginate(Bucket='${BUCKET}', PaginationConfig={'PageSize': 4}, **kw):
        keys += [o['Key'] for o in page.get('Contents', [])]
    out[name] = keys
tree = s3.list_objects_v2(Bucket='${BUCKET}', Delimiter='/')
out['tree'] = [p['Prefix'] for p in tree.get('CommonPrefixes', [])] + [o['Key'] for o in tree.get('Contents', [])]
sub = s3.list_objects_v2(Bucket='${BUCKET}', Prefix='run42/', Delimiter='/', MaxKeys=5)
out['sub-first'] = [o['Key'] for o in sub.get('Contents', [])] + [p['Prefix'] for p in sub.get('CommonPrefixes', [])]
print(json.dumps(out))
`;

const stores: [string, () => Promise<S3Server>, boolean][] = [
  ['s3rver', () => startS3rver({ buckets: [BUCKET] }), true],
  ['Swift', () => startSwift({ buckets: [BUCKET] }), (await swiftAvailable()).ok],
];

for (const [name, start, available] of stores) {
  describe.runIf(available)(`real clients list within a scope (${name})`, async () => {
    const store = await start();
    const gw = await gatewayOn(store.endpoint, store);
    for (const k of [...IN, ...OUT]) {
      expect((await signed(store.endpoint, store, 'PUT', `/${BUCKET}/${k.split('/').map(encodeURIComponent).join('/')}`, { body: k })).status).toBe(200);
    }
    const c = issue(ISSUER, [{ bucket: BUCKET, prefix: 'run42/', write: false }], 3_600_000, Date.now());
    const env = {
      ...process.env,
      AWS_ACCESS_KEY_ID: c.accessKeyId,
      AWS_SECRET_ACCESS_KEY: c.secretAccessKey,
      AWS_SESSION_TOKEN: c.sessionToken,
      AWS_DEFAULT_REGION: 'us-east-1',
      AWS_CONFIG_FILE: '/dev/null',
      AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
      AWS_EC2_METADATA_DISABLED: 'true',
    };

    it('boto3 paginates V2 and V1 listings from the root and within the scope', async () => {
      const dir = await tempDir('estuary-boto-');
      await writeFile(join(dir, 'list.py'), BOTO);
      const r = await run(join(venv, 'bin/python'), [join(dir, 'list.py'), gw.url, c.accessKeyId, c.secretAccessKey, c.sessionToken], { env });
      const out = JSON.parse(r.stdout) as Record<string, string[]>;
      for (const k of ['v2-root', 'v2-scope', 'v1-root', 'v1-scope']) expect(out[k], k).toEqual(IN);
      expect(out.tree).toEqual(['run42/']);
      expect(out['sub-first']).toEqual(IN.filter((k) => !k.startsWith('run42/sub/')).slice(0, 5));
    });

    it('aws s3 ls shows the scope at the root and pages through it', async () => {
      const aws = (...args: string[]) => run('/usr/bin/aws', ['--endpoint-url', gw.url, 's3', 'ls', ...args], { env });
      const top = await aws(`s3://${BUCKET}/`);
      expect(top.stdout.trim().split('\n').map((l) => l.trim())).toEqual(['PRE run42/']);
      const all = await aws(`s3://${BUCKET}/`, '--recursive', '--page-size', '5');
      expect(all.stdout.trim().split('\n').map((l) => l.trim().split(/\s+/).slice(3).join(' '))).toEqual(IN);
    });

    it('rclone lists the bucket root and the scope page by page', async () => {
      const conf = join(await tempDir('estuary-rclone-'), 'rclone.conf');
      await writeFile(
        conf,
        ['[gw]', 'type = s3', 'provider = Other', `endpoint = ${gw.url}`, 'region = us-east-1', 'force_path_style = true',
          `access_key_id = ${c.accessKeyId}`, `secret_access_key = ${c.secretAccessKey}`, `session_token = ${c.sessionToken}`, ''].join('\n'),
        { mode: 0o600 },
      );
      // rclone 1.60 refuses to start when AWS_CA_BUNDLE is set.
      const rcEnv: NodeJS.ProcessEnv = { ...env };
      delete rcEnv.AWS_CA_BUNDLE;
      const rclone = (...args: string[]) => run('rclone', ['--config', conf, '--s3-list-chunk', '4', ...args], { env: rcEnv });
      expect((await rclone('lsf', `gw:${BUCKET}`)).stdout.trim().split('\n')).toEqual(['run42/']);
      const rec = (await rclone('lsf', '-R', '--files-only', `gw:${BUCKET}/run42`)).stdout.trim().split('\n').sort();
      expect(rec).toEqual(IN.map((k) => k.slice('run42/'.length)).sort());
    });
  });
}
