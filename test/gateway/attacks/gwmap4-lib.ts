// Helpers for attacks on mapped disk hits of the S3 endpoint: s3rver (or MinIO) as the store,
// `estuary gateway --s3 kek-data=...` with its cache dir and process exposed (for kill -9), issued
// credentials, and the object's bytes as one buffer.

import { createHash, createHmac } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onTeardown } from '../../helpers/cleanup.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import type { S3Server } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { type Gateway, startGateway } from './gateway-lib.ts';
import { BUCKET, type Cred } from './s3-harness.ts';

const BIN = fileURLToPath(new URL('../../../bin/estuary.js', import.meta.url));
export const TOKEN = 'atk-map4-admin-token-0123456789';

export interface S3Gw extends Gateway {
  readonly gw: string;
  readonly dir: string;
  readonly cacheDir: string;
  readonly args: string[];
  issue(prefix: string, write?: boolean): Promise<Cred>;
}

/** A gateway serving BUCKET from `store`, every hit of a body over 0 bytes from disk (mapped when resident). */
export async function startS3Gw(store: S3Server, extra: string[] = [], reuse?: { dir: string; port: number }): Promise<S3Gw> {
  const dir = reuse?.dir ?? (await tempDir('estuary-atk-map4-'));
  const issuerKeyFile = join(dir, 'issuer.key');
  await writeFile(issuerKeyFile, 'k'.repeat(64), { mode: 0o600 });
  const keys = join(dir, 'keys.json');
  await writeFile(keys, JSON.stringify({ default: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey, region: store.region } }), { mode: 0o600 });
  const cacheDir = join(dir, 'cache');
  const args = [
    '--cache-dir', cacheDir, '--s3', `${BUCKET}=${store.endpoint}`, '--s3-issuer-key-file', issuerKeyFile,
    '--s3-credentials', keys, '--admin-token', TOKEN, '--mem-object-max', '0', ...extra,
  ];
  const g = await startGateway(args, reuse?.port);
  return {
    ...g,
    gw: `http://127.0.0.1:${g.port}`,
    dir,
    cacheDir,
    args,
    async issue(prefix, write = false) {
      const c = startChild(NODE, [
        BIN, 'gateway', 'credentials', 'issue', '--prefix', prefix, '--ttl', '1h',
        '--issuer-key-file', issuerKeyFile, '--format', 'json', ...(write ? ['--write'] : []),
      ]);
      await c.exited;
      const j = JSON.parse(c.output().slice(c.output().indexOf('{'))) as { AccessKeyId: string; SecretAccessKey: string; SessionToken: string };
      return { accessKeyId: j.AccessKeyId, secretAccessKey: j.SecretAccessKey, sessionToken: j.SessionToken };
    },
  };
}

const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');
const hmac = (k: Buffer | string, s: string) => createHmac('sha256', k).update(s, 'utf8').digest();

/** SigV4 headers for a bodiless request to `gw` with `cred` (path as sent, no query), plus `extra` unsigned. */
export function signedHeaders(gw: string, cred: Cred, method: string, path: string, extra: Record<string, string> = {}): Record<string, string> {
  const host = new URL(gw).host;
  const now = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const date = now.slice(0, 8);
  const h: Record<string, string> = { host, 'x-amz-date': now, 'x-amz-content-sha256': sha256(''), 'x-amz-security-token': cred.sessionToken };
  const names = Object.keys(h).sort();
  const creq = [method, path, '', names.map((k) => `${k}:${h[k]}\n`).join(''), names.join(';'), h['x-amz-content-sha256']].join('\n');
  const scope = `${date}/us-east-1/s3/aws4_request`;
  const key = hmac(hmac(hmac(hmac(`AWS4${cred.secretAccessKey}`, date), 'us-east-1'), 's3'), 'aws4_request');
  const sig = createHmac('sha256', key).update(['AWS4-HMAC-SHA256', now, scope, sha256(creq)].join('\n')).digest('hex');
  h.authorization = `AWS4-HMAC-SHA256 Credential=${cred.accessKeyId}/${scope}, SignedHeaders=${names.join(';')}, Signature=${sig}`;
  return { ...h, ...extra };
}

export interface Body {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
  /** The response ended with all of Content-Length (false: cut, reset, aborted). */
  readonly complete: boolean;
}

/** A signed GET whose body is read as bytes; `onFirst` runs (and the body pauses until it resolves) at the first chunk. */
export function getObject(gw: string, cred: Cred, path: string, onFirst?: () => Promise<void>): Promise<Body> {
  const u = new URL(gw);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path, method: 'GET', headers: signedHeaders(gw, cred, 'GET', path), agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let first = onFirst;
      let settled = false;
      const finish = (complete: boolean) => {
        if (settled) return;
        settled = true;
        const body = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, complete: complete && body.length === Number(res.headers['content-length'] ?? body.length) });
      };
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        if (first) {
          const f = first;
          first = undefined;
          res.pause();
          void f().then(() => res.resume());
        }
      });
      res.on('end', () => finish(res.complete));
      res.on('aborted', () => finish(false));
      res.on('error', () => finish(false));
      res.on('close', () => finish(false));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Mappings of files under `dir` in process `pid` (lines of /proc/PID/maps), and its descriptors open on them. */
export function heldUnder(pid: number, dir: string): { maps: string[]; fds: string[] } {
  const maps = readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n').filter((l) => l.includes(dir));
  const fds: string[] = [];
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const t = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (t.includes(dir)) fds.push(t);
    } catch {
      // closed meanwhile
    }
  }
  return { maps, fds };
}

/** A TCP relay to `target` (host:port URL) that sends the store's replies at about `bytesPerSec`. */
export async function slowRelay(target: string, bytesPerSec: number): Promise<{ url: string }> {
  const t = new URL(target);
  const sockets = new Set<net.Socket>();
  const srv = net.createServer((c) => {
    const up = net.connect(Number(t.port), t.hostname);
    sockets.add(c).add(up);
    c.on('close', () => sockets.delete(c));
    up.on('close', () => sockets.delete(up));
    c.on('error', () => up.destroy());
    up.on('error', () => c.destroy());
    c.pipe(up);
    const slice = Math.max(1024, Math.floor(bytesPerSec / 20));
    up.on('data', (d: Buffer) => {
      up.pause();
      let off = 0;
      const next = () => {
        if (c.destroyed) return;
        if (off >= d.length) return void up.resume();
        c.write(d.subarray(off, off + slice));
        off += slice;
        setTimeout(next, 50);
      };
      next();
    });
    up.on('end', () => c.end());
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  onTeardown(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => srv.close(() => r()));
  });
  return { url: `http://127.0.0.1:${(srv.address() as net.AddressInfo).port}` };
}
