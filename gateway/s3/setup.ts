// Start-up of the S3 endpoint: the issuer key and the stores' keys are read from files or the
// environment (never from the command line, where `ps` would show them), checked, and turned into
// the per-bucket upstreams. Every problem is one line naming the option to fix.

import { readFileSync } from 'node:fs';
import { gatewayErrors } from '../errors.ts';
import type { S3BucketSpec } from '../options.ts';
import { MIN_ISSUER_KEY_BYTES } from './credentials.ts';
import type { UpstreamBucket } from './endpoint.ts';

interface KeyEntry {
  readonly accessKeyId?: unknown;
  readonly secretAccessKey?: unknown;
  readonly sessionToken?: unknown;
  readonly region?: unknown;
}

function readText(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw gatewayErrors.s3Config(`cannot read ${what} ${path} (${(err as NodeJS.ErrnoException).code ?? err})`);
  }
}

export function readIssuerKey(path: string | undefined, option = '--s3-issuer-key-file'): string {
  if (!path) throw gatewayErrors.s3Config(`${option} is required: a file holding a key of at least ${MIN_ISSUER_KEY_BYTES} characters (openssl rand -hex 32 > FILE)`);
  const key = readText(path, 'issuer key file').trim();
  if (Buffer.byteLength(key) < MIN_ISSUER_KEY_BYTES) {
    throw gatewayErrors.s3Config(`the issuer key in ${path} is shorter than ${MIN_ISSUER_KEY_BYTES} characters; make one with openssl rand -hex 32`);
  }
  return key;
}

function entryFor(file: Record<string, KeyEntry> | undefined, name: string, env: Record<string, string | undefined>): KeyEntry {
  if (file) return file[name] ?? file.default ?? {};
  return {
    accessKeyId: env.AWS_ACCESS_KEY_ID,
    secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
    sessionToken: env.AWS_SESSION_TOKEN,
  };
}

export function upstreamBuckets(
  specs: readonly S3BucketSpec[],
  credentialsFile: string | undefined,
  region: string,
  env: Record<string, string | undefined> = process.env,
): Map<string, UpstreamBucket> {
  let file: Record<string, KeyEntry> | undefined;
  if (credentialsFile) {
    try {
      file = JSON.parse(readText(credentialsFile, 'credentials file')) as Record<string, KeyEntry>;
    } catch (err) {
      if ((err as { code?: string }).code === 'ESTUARY_GW_S3_CONFIG') throw err;
      throw gatewayErrors.s3Config(`${credentialsFile} is not JSON like {"default": {"accessKeyId": "...", "secretAccessKey": "..."}}`);
    }
  }
  const out = new Map<string, UpstreamBucket>();
  for (const s of specs) {
    const e = entryFor(file, s.name, env);
    if (typeof e.accessKeyId !== 'string' || typeof e.secretAccessKey !== 'string' || !e.accessKeyId || !e.secretAccessKey) {
      throw gatewayErrors.s3Config(
        `no keys for the store of bucket ${s.name}: put them in --s3-credentials FILE (under "${s.name}" or "default") or in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY`,
      );
    }
    out.set(s.name, {
      origin: s.origin,
      bucket: s.bucket,
      region: typeof e.region === 'string' ? e.region : region,
      credentials: {
        accessKeyId: e.accessKeyId,
        secretAccessKey: e.secretAccessKey,
        sessionToken: typeof e.sessionToken === 'string' && e.sessionToken ? e.sessionToken : undefined,
      },
    });
  }
  return out;
}
