// The endpoint probe with TLS (fuse/endpoint-probe.ts, endpoint-diagnosis.ts): a real S3 server
// (s3rver) behind a TLS terminator whose certificate comes from a private CA. `estuary mount --help`
// and docs/SEMANTICS.md: "A private CA is trusted through NODE_EXTRA_CA_CERTS"; a certificate Node
// refuses ends the mount with ESTUARY_FS_ENDPOINT_CERT (exit 2). Held up when attacked: kept as
// regressions — a trusted private CA mounts and carries data both ways, an untrusted one and an
// expired certificate are each named in one line.

import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isMounted } from '../../../fuse/mount-table.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { type S3rverServer, startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, runEstuary, serverEnv, sh } from '../mount-helpers.ts';

afterAll(runTeardowns);

let s3: S3rverServer;
let pki: string;

function openssl(args: string[], cwd: string) {
  execFileSync('openssl', args, { cwd, stdio: 'ignore' });
}

/** A CA, and two certificates for 127.0.0.1 signed by it: one valid for 2 days, one expired. */
async function makePki(): Promise<string> {
  const dir = await tempDir('estuary-atk-pki-');
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=atk-ca'], dir);
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'srv.key', '-out', 'srv.csr', '-subj', '/CN=127.0.0.1'], dir);
  await writeFile(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  for (const [out, days] of [
    ['good.pem', '2'],
    ['expired.pem', '-1'],
  ] as const) {
    openssl(['x509', '-req', '-in', 'srv.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', out, '-days', days, '-extfile', 'ext.cnf'], dir);
  }
  return dir;
}

/** A TLS terminator in front of s3rver, with `cert`. */
async function tlsFront(cert: string): Promise<string> {
  const srv = https.createServer(
    { key: await readFile(join(pki, 'srv.key')), cert: await readFile(join(pki, cert)) },
    (req, res) => {
      const up = http.request(
        { host: '127.0.0.1', port: s3.port, method: req.method, path: req.url, headers: req.headers },
        (ur) => {
          res.writeHead(ur.statusCode ?? 502, ur.headers);
          ur.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      req.pipe(up);
    },
  );
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  onTeardown(() => {
    srv.closeAllConnections();
    return new Promise<void>((r) => srv.close(() => r()));
  });
  return `https://127.0.0.1:${(srv.address() as AddressInfo).port}`;
}

async function tryMount(endpoint: string, env: NodeJS.ProcessEnv, use?: (dir: string) => Promise<void>) {
  const dir = await tempDir('estuary-atk-tls-mnt-');
  const child = runEstuary(['mount', 'kek', dir, '--endpoint', endpoint, '--retries', '1'], { ...serverEnv(s3), ...env });
  onTeardown(async () => {
    if (await isMounted(dir)) await sh(`fusermount -uz '${dir}'`);
  });
  const mounted = await Promise.race([
    child.waitFor(/mounted kek/, 30_000).then(() => true, () => false),
    child.exited.then(() => false),
  ]);
  if (mounted) {
    await use?.(dir);
    await sh(`fusermount -u '${dir}' || fusermount -uz '${dir}'`);
  }
  const code = await child.stop('SIGTERM', 10_000);
  return { mounted, code, out: child.output() };
}

describe.runIf(fuseAvailable().ok)('the endpoint probe over TLS, in front of a real S3 server', () => {
  beforeAll(async () => {
    s3 = await startS3rver({ buckets: ['kek'] });
    pki = await makePki();
  }, 30_000);

  it('mounts through a private CA given in NODE_EXTRA_CA_CERTS, and data goes both ways', async () => {
    const endpoint = await tlsFront('good.pem');
    let read = '';
    const r = await tryMount(endpoint, { NODE_EXTRA_CA_CERTS: join(pki, 'ca.pem') }, async (dir) => {
      await writeFile(join(dir, 'tls.txt'), 'over tls\n');
      read = await readFile(join(dir, 'tls.txt'), 'utf8');
    });
    expect(r.mounted, r.out).toBe(true);
    expect(read).toBe('over tls\n');
  }, 60_000);

  it('names an untrusted private CA in one line (exit 2), with the NODE_EXTRA_CA_CERTS remedy', async () => {
    const r = await tryMount(await tlsFront('good.pem'), {});
    expect(r.mounted, r.out).toBe(false);
    expect(r.code, r.out).toBe(2);
    expect(r.out.trim().split('\n')).toHaveLength(1);
    expect(r.out).toMatch(/not trusted.*NODE_EXTRA_CA_CERTS/);
  }, 60_000);

  it("names an expired certificate in one line (exit 2), even from a trusted CA", async () => {
    const r = await tryMount(await tlsFront('expired.pem'), { NODE_EXTRA_CA_CERTS: join(pki, 'ca.pem') });
    expect(r.mounted, r.out).toBe(false);
    expect(r.code, r.out).toBe(2);
    expect(r.out.trim().split('\n')).toHaveLength(1);
    expect(r.out).toMatch(/certificate.*(expired|dates)/i);
  }, 60_000);
});
