// The S3 clients the compatibility tests drive through the gateway, each with its own default
// settings: the AWS SDK v3 (no checksum overrides), boto3 (PyPI, scripts/ensure-boto3.sh), and
// awscli 2 (the Debian package, /usr/bin/aws). A gateway in front of a store with a credential
// scoped to one prefix, as a job would get it.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { S3Client } from '@aws-sdk/client-s3';
import { issue, type Scope } from '../../../gateway/s3/credentials.ts';
import type { S3Server } from '../../helpers/s3rver.ts';
import { IN_CI, required } from '../../helpers/services.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { startTestGateway } from './gateway.ts';

export const ISSUER = 'test-issuer-key-0123456789abcdef0123456789';
export const BUCKET = 'kek-data';
export const AWSCLI = '/usr/bin/aws';
const BOTO3_SCRIPT = new URL('../../../scripts/ensure-boto3.sh', import.meta.url).pathname;
const BOTO3_CLIENT = new URL('./boto3-client.py', import.meta.url).pathname;
const run = promisify(execFile);

export interface Creds {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken: string;
}

export function creds(scopes: Scope[]): Creds {
  const c = issue(ISSUER, scopes, 3_600_000, Date.now());
  return { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey, sessionToken: c.sessionToken };
}

export async function gatewayFor(store: S3Server | string, flags: Record<string, unknown> = {}) {
  const origin = typeof store === 'string' ? store : store.endpoint;
  const keys = typeof store === 'string' ? {} : { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey, region: store.region };
  const dir = await tempDir('estuary-gw-clients-');
  await writeFile(join(dir, 'issuer.key'), ISSUER);
  await writeFile(join(dir, 'keys.json'), JSON.stringify({ default: { ...keys, ...(flags.keys as object) } }));
  const { keys: _k, ...rest } = flags;
  return startTestGateway({
    s3: [`${BUCKET}=${origin}`],
    s3IssuerKeyFile: join(dir, 'issuer.key'),
    s3Credentials: join(dir, 'keys.json'),
    s3Revalidate: '60s',
    allowDest: [],
    ...rest,
  });
}

/** The SDK exactly as an application gets it: only endpoint, path style and credentials set. */
export function sdkDefaults(endpoint: string, c: Creds): S3Client {
  return new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: c, maxAttempts: 1 });
}

/** The venv's python with boto3, or undefined (skipped outside CI) when it cannot be installed. */
export async function boto3Python(): Promise<string | undefined> {
  try {
    const { stdout } = await run('bash', [BOTO3_SCRIPT], { timeout: 300_000 });
    return `${stdout.trim().split('\n').pop()!}/bin/python`;
  } catch (err) {
    const why = String((err as { stderr?: string }).stderr ?? err).trim().split('\n').pop()!;
    if (IN_CI) throw new Error(`CI=true and boto3 could not be installed: ${why}`, { cause: err });
    required('boto3 (PyPI)', false, `bash scripts/ensure-boto3.sh (${why})`);
    return undefined;
  }
}

export function awscliAvailable(): boolean {
  return required('awscli (Debian)', existsSync(AWSCLI), 'apt-get install awscli').ok;
}

function clientEnv(c: Creds): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    AWS_ACCESS_KEY_ID: c.accessKeyId,
    AWS_SECRET_ACCESS_KEY: c.secretAccessKey,
    AWS_SESSION_TOKEN: c.sessionToken,
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_CONFIG_FILE: '/dev/null',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    AWS_PAGER: '',
  };
}

export interface Boto3Result {
  readonly ok: boolean;
  readonly code?: string;
  readonly message?: string;
  readonly status?: number;
  readonly md5?: string;
  readonly length?: number;
  readonly pages?: number;
}

export async function boto3(python: string, endpoint: string, c: Creds, op: string, key: string, arg?: string): Promise<Boto3Result> {
  const args = [BOTO3_CLIENT, endpoint, BUCKET, op, key, ...(arg === undefined ? [] : [arg])];
  const { stdout } = await run(python, args, { env: clientEnv(c), timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').pop()!) as Boto3Result;
}

/** awscli 2 with its defaults; resolves with exit code and output, never rejects. */
export function awscli(endpoint: string, c: Creds, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(AWSCLI, ['--endpoint-url', endpoint, ...args], { env: { ...clientEnv(c), ...env }, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` });
    });
  });
}
