// Attack: keys from a profile's credential_process that hangs, prints garbage, or returns keys
// that have expired. Without keys in the environment the mount loads the AWS SDK's chain
// (docs/SEMANTICS.md "Which store, which region, which keys"); what that chain fails with must
// reach the user as what it is, and a process that never answers must not hold the mount.

import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { NODE } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { startLyingServer, xml } from './lying-s3.ts';

afterAll(runTeardowns);

const BIN = new URL('../../../bin/estuary.js', import.meta.url).pathname;

/** `estuary mount` with only the profile's credential_process to sign with. */
async function mountWith(process_: string, killAfterMs: number) {
  const server = await startLyingServer((req) =>
    req.url.searchParams.has('location')
      ? { body: xml('<LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/"/>') }
      : { status: 200 },
  );
  const dir = await tempDir('estuary-atk-mctl-cred-');
  const pids = join(dir, 'pids');
  writeFileSync(pids, '');
  onTeardown(() => {
    for (const pid of readFileSync(pids, 'utf8').split('\n').filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // gone
      }
    }
  });
  const config = join(dir, 'config');
  writeFileSync(config, `[profile atk]\ncredential_process = echo $$ >> ${pids}; ${process_}\n`);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AWS_CONFIG_FILE: config,
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'none'),
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_PROFILE: 'atk',
    AWS_REGION: 'us-east-1',
  };
  for (const k of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_WEB_IDENTITY_TOKEN_FILE', 'AWS_CONTAINER_CREDENTIALS_FULL_URI', 'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI'])
    delete env[k];
  const mnt = join(dir, 'mnt');
  const args = [BIN, 'mount', 'bkt', mnt, '--endpoint', server.endpoint, '--retries', '2', '--request-timeout', '3s'];
  mkdirSync(mnt);
  const started = Date.now();
  return new Promise<{ code: number | string; out: string; ms: number }>((resolve) => {
    execFile(NODE, args, { env, timeout: killAfterMs, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
      const e = err as { code?: number; killed?: boolean } | null;
      resolve({ code: e?.killed ? 'killed' : (e?.code ?? 0), out: `${stdout}${stderr}`, ms: Date.now() - started });
    });
  });
}

describe('a credential_process that misbehaves', () => {
  // Expected: the mount gives up on a credential process that says nothing for a bounded time
  // (--request-timeout, as for a silent store: "must not hold the caller") and exits 2 with one
  // line naming the credential process. Today it waits for it forever, silently.
  it('one that hangs does not hold the mount forever', async () => {
    const { code, out } = await mountWith('exec sleep 40', 15_000);
    expect(code, out).not.toBe('killed');
    expect(out).toMatch(/credential/i);
  }, 20_000);

  // Expected: the message says the profile's credential_process answered something that is not
  // credentials. Today: "no S3 credentials found; set AWS_ACCESS_KEY_ID and
  // AWS_SECRET_ACCESS_KEY, or AWS_PROFILE", although AWS_PROFILE is set and its process ran.
  it('one that prints garbage is named in the error', async () => {
    const { code, out } = await mountWith('echo hello world', 15_000);
    expect(code).toBe(2);
    expect(out).toMatch(/credential_process|profile "?atk/);
  });

  // Expected: the message says the keys it returned have expired. Today: "no S3 credentials
  // found", as above.
  it('one that returns expired keys is named in the error', async () => {
    const keys = '{"Version":1,"AccessKeyId":"AK","SecretAccessKey":"SK","Expiration":"2001-01-01T00:00:00Z"}';
    const { code, out } = await mountWith(`echo '${keys}'`, 15_000);
    expect(code).toBe(2);
    expect(out).toMatch(/expired/i);
  });
});

describe('keys from the environment with a line break', () => {
  // A .env file with CRLF line ends, or a token pasted with its newline, leaves a \r or \n in the
  // variable. Expected: exit 2 with one line naming the variable that holds it (bad input, as
  // ESTUARY_FS_STORE_ADDRESS does for the address). Today: "cannot reach the S3 endpoint ...
  // (request header "authorization" holds a character HTTP cannot carry); check --endpoint and
  // that the server is up", exit 1 — the endpoint is blamed for the key.
  for (const [name, value] of [
    ['AWS_ACCESS_KEY_ID', 'AK\r'],
    ['AWS_SESSION_TOKEN', 'token\n'],
  ] as const) {
    it(`${name} ending in a line break is named`, async () => {
      const server = await startLyingServer((req) =>
        req.url.searchParams.has('location')
          ? { body: xml('<LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/"/>') }
          : { status: 200 },
      );
      const dir = await tempDir('estuary-atk-mctl-keys-');
      const env = { ...process.env, AWS_ACCESS_KEY_ID: 'AK', AWS_SECRET_ACCESS_KEY: 'SK', AWS_REGION: 'us-east-1', [name]: value };
      const args = [BIN, 'mount', 'bkt', dir, '--endpoint', server.endpoint, '--retries', '2'];
      const { code, out } = await new Promise<{ code: number; out: string }>((resolve) => {
        execFile(NODE, args, { env, timeout: 20_000, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
          const c = (err as { code?: number } | null)?.code ?? 0;
          resolve({ code: typeof c === 'number' ? c : -1, out: `${stdout}${stderr}` });
        });
      });
      expect(out).toContain(name);
      expect(out).not.toContain('server is up');
      expect(code).toBe(2);
    });
  }
});
