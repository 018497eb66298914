// Without keys in the environment the mount's client signs with what the AWS SDK's credential
// chain finds, here a profile's credential_process, and asks the chain again as those keys near
// their expiration (docs/SEMANTICS.md: "asked for again five minutes before they expire").

import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { S3ObjectClient } from '../../../fuse/s3/s3-client.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);

/** Sets `vars` in process.env (undefined: removes) until the file's teardown. */
function setEnv(vars: Record<string, string | undefined>): void {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const apply = (v: Record<string, string | undefined>) => {
    for (const [k, x] of Object.entries(v)) if (x === undefined) delete process.env[k];
    else process.env[k] = x;
  };
  apply(vars);
  onTeardown(() => apply(before));
}

describe('keys from the credential chain', () => {
  it('signs with a credential_process and runs it again as its keys near their expiration', async () => {
    const s3 = await startS3rver({ buckets: ['chain'] });
    const dir = await tempDir('estuary-chain-');
    const calls = join(dir, 'calls');
    const script = join(dir, 'creds.sh');
    // Keys that expire 5 min + 3 s from now: fresh for 3 s, then due for a refresh.
    await writeFile(
      script,
      `#!/bin/sh\necho x >> '${calls}'\nexp=$(date -u -d '+303 seconds' +%Y-%m-%dT%H:%M:%SZ)\n` +
        `printf '{"Version":1,"AccessKeyId":"${s3.accessKeyId}","SecretAccessKey":"${s3.secretAccessKey}","SessionToken":"t","Expiration":"%s"}' "$exp"\n`,
    );
    await chmod(script, 0o755);
    await writeFile(join(dir, 'config'), `[profile proc]\ncredential_process = ${script}\n`);
    setEnv({
      AWS_ACCESS_KEY_ID: undefined,
      AWS_SECRET_ACCESS_KEY: undefined,
      AWS_SESSION_TOKEN: undefined,
      AWS_PROFILE: 'proc',
      AWS_CONFIG_FILE: join(dir, 'config'),
      AWS_SHARED_CREDENTIALS_FILE: join(dir, 'none'),
      AWS_EC2_METADATA_DISABLED: 'true',
    });
    const client = new S3ObjectClient({
      bucket: 'chain',
      endpoint: s3.endpoint,
      region: s3.region,
      maxAttempts: 2,
      idleTimeoutMs: 10_000,
      maxSockets: 4,
    });
    onTeardown(() => client.destroy());
    const count = async () => (await readFile(calls, 'utf8')).split('\n').filter(Boolean).length;
    await client.put('k', Buffer.from('signed by the chain'));
    expect((await client.list('')).objects.map((o) => o.key)).toEqual(['k']);
    expect(await count()).toBe(1);
    await new Promise((r) => setTimeout(r, 3500));
    expect((await client.get('k')).toString()).toBe('signed by the chain');
    expect(await count()).toBe(2);
  }, 30_000);
});
