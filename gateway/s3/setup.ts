// Start-up of the S3 endpoint: the issuer key and the stores' keys are read from files or the
// environment (never from the command line, where `ps` would show them), checked, and turned into
// the per-bucket upstreams. Every problem is one line naming the option to fix.

import { lookup } from 'node:dns/promises';
import { isIPv4, isIPv6 } from 'node:net';
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

/** The addresses and port a store URL reaches; its host name as written when it does not resolve. */
async function storeAddresses(origin: string): Promise<{ addresses: Set<string>; port: string }> {
  const u = new URL(origin);
  const host = u.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  const port = u.port || (u.protocol === 'https:' ? '443' : '80');
  // A resolver that does not answer within 2 s leaves the name as written (a store that is not
  // up yet must not stop the gateway from starting).
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), 2000)));
  const found = await Promise.race([lookup(host, { all: true }).catch(() => undefined), late]);
  clearTimeout(timer);
  return { addresses: new Set((found ? found.map((a) => a.address) : [host]).map(canonicalAddress)), port };
}

/** One spelling per address: IPv6 compressed in lower case, an IPv4-mapped one as its IPv4. */
function canonicalAddress(a: string): string {
  if (isIPv4(a) || !isIPv6(a)) return a;
  const six = new URL(`http://[${a}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(six);
  if (!mapped) return six;
  const [hi, lo] = [parseInt(mapped[1]!, 16), parseInt(mapped[2]!, 16)];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/**
 * Refuses two served names for one store bucket however its URL is spelt (a host name and its
 * address, a trailing dot): objects are cached under the name served, so a write through one
 * name would leave the other's copies of the same object served. options.ts refuses the same
 * spelling without a resolver; this resolves the stores' host names, once, before any worker.
 */
export async function refuseSharedStoreBuckets(specs: readonly S3BucketSpec[]): Promise<void> {
  const reached = await Promise.all(specs.map((s) => storeAddresses(s.origin)));
  for (let i = 0; i < specs.length; i++) {
    for (let j = 0; j < i; j++) {
      const [a, b] = [reached[i]!, reached[j]!];
      if (specs[i]!.bucket !== specs[j]!.bucket || a.port !== b.port || ![...a.addresses].some((x) => b.addresses.has(x))) continue;
      throw gatewayErrors.s3Config(
        `${specs[i]!.name} (${specs[i]!.origin}) and ${specs[j]!.name} (${specs[j]!.origin}) both serve bucket ${specs[i]!.bucket} of one store; serve each store bucket under one name`,
      );
    }
  }
}
