// Raw SigV4-signed requests for the scope tests: an SDK may encode or normalise a key on its
// way out, and these tests must send exactly the bytes an attacker would.

import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sign, UNSIGNED_PAYLOAD } from '../../../lib/sigv4.ts';
import type { S3Server } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { type Reply, send } from './client.ts';
import { startTestGateway } from './gateway.ts';

export const BUCKET = 'kek-data';
export const ISSUER = 'test-issuer-key-0123456789abcdef0123456789';

export interface Cred {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

/** `method path?query` to `base`, signed with `cred` exactly as written (no re-encoding). */
export function signed(
  base: string,
  cred: Cred,
  method: string,
  target: string,
  o: { headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<Reply> {
  const q = target.indexOf('?');
  const path = q === -1 ? target : target.slice(0, q);
  const query = q === -1 ? '' : target.slice(q + 1);
  const body = o.body === undefined ? undefined : Buffer.from(o.body);
  const extra: Record<string, string> = { ...o.headers };
  if (cred.sessionToken) extra['x-amz-security-token'] = cred.sessionToken;
  const hash = body ? createHash('sha256').update(body).digest('hex') : UNSIGNED_PAYLOAD;
  const headers = sign({ method, path, query, headers: extra, host: new URL(base).host }, cred, 'us-east-1', hash, Date.now());
  if (body) headers['content-length'] = String(body.length);
  return send(base, target, { method, headers, body });
}

/** A gateway serving BUCKET from `origin` (the store, or a relay in front of it) with the store's keys. */
export async function gatewayOn(origin: string, store: S3Server) {
  const dir = await tempDir('estuary-gw-scope-');
  await writeFile(join(dir, 'issuer.key'), ISSUER);
  await writeFile(
    join(dir, 'keys.json'),
    JSON.stringify({ default: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey, region: store.region } }),
  );
  return startTestGateway({
    s3: [`${BUCKET}=${origin}`],
    s3IssuerKeyFile: join(dir, 'issuer.key'),
    s3Credentials: join(dir, 'keys.json'),
    allowDest: [],
  });
}
