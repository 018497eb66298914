// Harness for attacks on the gateway's S3 endpoint from outside: a store (s3rver or Swift) behind a
// relay that records every request, `estuary gateway --s3 kek-data=...` as a user runs it, issued
// credentials from `estuary gateway credentials issue`, and raw SigV4-signed requests whose path,
// query and headers the attacker chooses byte for byte.

import { createHash, createHmac } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CountingProxy, startCountingProxy } from '../../helpers/counting-proxy.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import type { S3Server } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';

const BIN = fileURLToPath(new URL('../../../bin/estuary.js', import.meta.url));
export const BUCKET = 'kek-data';

export interface Cred {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken: string;
}

export interface Rig {
  readonly gw: string;
  readonly relay: CountingProxy;
  readonly issuerKeyFile: string;
  issue(prefix: string, write: boolean, ttl?: string): Promise<Cred>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

export async function startRig(store: S3Server, extraArgs: string[] = []): Promise<Rig> {
  const dir = await tempDir('estuary-atk-s3-');
  const issuerKeyFile = join(dir, 'issuer.key');
  await writeFile(issuerKeyFile, 'k'.repeat(64), { mode: 0o600 });
  const keys = join(dir, 'keys.json');
  await writeFile(
    keys,
    JSON.stringify({ default: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey, region: store.region } }),
    { mode: 0o600 },
  );
  const relay = await startCountingProxy(store.endpoint);
  const port = await freePort();
  const child = startChild(NODE, [
    BIN, 'gateway', '--listen', `127.0.0.1:${port}`, '--cache-dir', join(dir, 'cache'),
    '--s3', `${BUCKET}=${relay.url}`, '--s3-issuer-key-file', issuerKeyFile, '--s3-credentials', keys,
    '--log-level', 'info', ...extraArgs,
  ]);
  await child.waitFor(/gateway listening/, 30_000);
  const gw = `http://127.0.0.1:${port}`;
  return {
    gw,
    relay,
    issuerKeyFile,
    async issue(prefix, write, ttl = '1h') {
      const c = startChild(NODE, [
        BIN, 'gateway', 'credentials', 'issue', '--prefix', prefix, '--ttl', ttl,
        '--issuer-key-file', issuerKeyFile, '--format', 'json', ...(write ? ['--write'] : []),
      ]);
      await c.exited;
      const j = JSON.parse(c.output().slice(c.output().indexOf('{'))) as { AccessKeyId: string; SecretAccessKey: string; SessionToken: string };
      return { accessKeyId: j.AccessKeyId, secretAccessKey: j.SecretAccessKey, sessionToken: j.SessionToken };
    },
  };
}

const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');
const hmac = (k: Buffer | string, s: string) => createHmac('sha256', k).update(s, 'utf8').digest();

function enc(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** AWS's canonical query: each name and value decoded then encoded, sorted. */
function canonicalQuery(raw: string): string {
  if (raw === '') return '';
  const dec = (s: string) => {
    try {
      return decodeURIComponent(s.replace(/\+/g, '%20'));
    } catch {
      return s;
    }
  };
  return raw
    .split('&')
    .filter((p) => p !== '')
    .map((p) => {
      const i = p.indexOf('=');
      return [enc(dec(i === -1 ? p : p.slice(0, i))), enc(dec(i === -1 ? '' : p.slice(i + 1)))] as const;
    })
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

export interface Sent {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/**
 * One request signed by hand with `cred`: `target` is the request-target exactly as sent (path and
 * query), `headers` are sent as given (x-amz-* ones are signed, others not).
 */
export async function send(
  gw: string,
  cred: Cred,
  method: string,
  target: string,
  o: { headers?: Record<string, string>; body?: string | Buffer; host?: string; unsigned?: string[] } = {},
): Promise<Sent> {
  const u = new URL(gw);
  const host = o.host ?? u.host;
  const body = o.body === undefined ? Buffer.alloc(0) : Buffer.from(o.body);
  const now = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const date = now.slice(0, 8);
  const qi = target.indexOf('?');
  const path = qi === -1 ? target : target.slice(0, qi);
  const query = qi === -1 ? '' : target.slice(qi + 1);
  const h: Record<string, string> = {
    host,
    'x-amz-date': now,
    'x-amz-content-sha256': sha(body),
    'x-amz-security-token': cred.sessionToken,
    ...Object.fromEntries(Object.entries(o.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
  };
  const signedNames = Object.keys(h).filter((k) => k === 'host' || k.startsWith('x-amz-') || k === 'content-md5').sort();
  const creq = [method, path, canonicalQuery(query), signedNames.map((k) => `${k}:${h[k]!.trim()}\n`).join(''), signedNames.join(';'), h['x-amz-content-sha256']].join('\n');
  const scope = `${date}/us-east-1/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', now, scope, sha(creq)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${cred.secretAccessKey}`, date), 'us-east-1'), 's3'), 'aws4_request');
  const sig = createHmac('sha256', key).update(toSign).digest('hex');
  h.authorization = `AWS4-HMAC-SHA256 Credential=${cred.accessKeyId}/${scope}, SignedHeaders=${signedNames.join(';')}, Signature=${sig}`;
  if (body.length > 0 || !['GET', 'HEAD', 'DELETE'].includes(method)) h['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    const r = request({ host: u.hostname, port: u.port, method, path: target, headers: h }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end(body);
  });
}

/** The store's own view, with the site's keys, for setting up and checking objects. */
export function siteCred(store: S3Server): Cred {
  return { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey, sessionToken: '' };
}

/** A request straight to the store with its own keys (no session token). */
export async function direct(store: S3Server, method: string, target: string, body?: string): Promise<Sent> {
  const u = new URL(store.endpoint);
  const now = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const date = now.slice(0, 8);
  const qi = target.indexOf('?');
  const path = qi === -1 ? target : target.slice(0, qi);
  const query = qi === -1 ? '' : target.slice(qi + 1);
  const b = Buffer.from(body ?? '');
  const h: Record<string, string> = { host: u.host, 'x-amz-date': now, 'x-amz-content-sha256': sha(b) };
  const names = Object.keys(h).sort();
  const creq = [method, path, canonicalQuery(query), names.map((k) => `${k}:${h[k]}\n`).join(''), names.join(';'), h['x-amz-content-sha256']].join('\n');
  const scope = `${date}/${store.region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', now, scope, sha(creq)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${store.secretAccessKey}`, date), store.region), 's3'), 'aws4_request');
  const sig = createHmac('sha256', key).update(toSign).digest('hex');
  h.authorization = `AWS4-HMAC-SHA256 Credential=${store.accessKeyId}/${scope}, SignedHeaders=${names.join(';')}, Signature=${sig}`;
  h['content-length'] = String(b.length);
  return new Promise((resolve, reject) => {
    const r = request({ host: u.hostname, port: u.port, method, path: target, headers: h }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    r.on('error', reject);
    r.end(b);
  });
}

const sha256Hex = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');
const hmacOf = (k: Buffer | string, s: string) => createHmac('sha256', k).update(s, 'utf8').digest();

/** A GET or HEAD straight to the store, signed with its keys, with `extra` headers unsigned. */
export function atStore(store: S3Server, method: string, path: string, extra: Record<string, string>): Promise<{ status: number; length: number }> {
  const u = new URL(store.endpoint);
  const now = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const date = now.slice(0, 8);
  const h: Record<string, string> = { host: u.host, 'x-amz-date': now, 'x-amz-content-sha256': sha256Hex('') };
  const names = Object.keys(h).sort();
  const creq = [method, path, '', names.map((k) => `${k}:${h[k]}\n`).join(''), names.join(';'), h['x-amz-content-sha256']].join('\n');
  const scope = `${date}/${store.region}/s3/aws4_request`;
  const key = hmacOf(hmacOf(hmacOf(hmacOf(`AWS4${store.secretAccessKey}`, date), store.region), 's3'), 'aws4_request');
  const sig = createHmac('sha256', key).update(['AWS4-HMAC-SHA256', now, scope, sha256Hex(creq)].join('\n')).digest('hex');
  h.authorization = `AWS4-HMAC-SHA256 Credential=${store.accessKeyId}/${scope}, SignedHeaders=${names.join(';')}, Signature=${sig}`;
  return new Promise((resolve, reject) => {
    const r = request({ host: u.hostname, port: u.port, method, path, headers: { ...h, ...extra } }, (res) => {
      let n = 0;
      res.on('data', (c: Buffer) => (n += c.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, length: n }));
    });
    r.on('error', reject);
    r.end();
  });
}

/** Writes one answer without Content-Length: a body of one chunk, or a body the close ends. */
export function writeUndelimited(s: Socket, status: string, head: string, body: Buffer, framing: 'chunked' | 'close'): void {
  if (framing === 'chunked') {
    s.write(`HTTP/1.1 ${status}\r\n${head}Transfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n`);
    s.write(body);
    s.write('\r\n0\r\n\r\n');
  } else {
    s.write(`HTTP/1.1 ${status}\r\n${head}Connection: close\r\n\r\n`);
    s.end(body);
  }
}
