// The probe `estuary mount` sends --endpoint before it checks the bucket (fuse/endpoint-probe.ts)
// and what it concludes (fuse/endpoint-diagnosis.ts), against real listeners on loopback: an S3
// server (s3rver, Swift, MinIO), a web page, a silent port, TLS ports reached with http://, a self-signed certificate.
// The last test mounts through TLS with the certificate given in NODE_EXTRA_CA_CERTS, as the
// refusal tells the user to.

import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer as createHttp, type Server } from 'node:http';
import { type AddressInfo, connect, createServer as createTcp, type Socket } from 'node:net';
import { join } from 'node:path';
import { createServer as createTls } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { describeBody, isWebPage } from '../../fuse/endpoint-body.ts';
import { diagnoseEndpoint, type EndpointFacts, webRefusal } from '../../fuse/endpoint-diagnosis.ts';
import { probeEndpoint, probeUrl } from '../../fuse/endpoint-probe.ts';
import { isMounted } from '../../fuse/mount-table.ts';
import type { EstuaryError } from '../../lib/errors.ts';
import { onTeardown } from '../helpers/cleanup.ts';
import { minioAvailable, startMinio } from '../helpers/minio.ts';
import { startS3rver } from '../helpers/s3rver.ts';
import { startSwift, swiftAvailable } from '../helpers/swift.ts';
import { tempDir } from '../helpers/tmp.ts';
import { fuseAvailable, runEstuary, serverEnv, sh } from './mount-helpers.ts';

const fuse = fuseAvailable();
const swift = await swiftAvailable();
const minio = await minioAvailable();

async function listen(server: Server | ReturnType<typeof createTcp>): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => sockets.add(s));
  onTeardown(() => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return (server.address() as AddressInfo).port;
}

/** A certificate for 127.0.0.1, its own CA. */
async function selfSigned(): Promise<{ key: string; cert: string; certFile: string }> {
  const dir = await tempDir('estuary-cert-');
  const [key, cert] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert,
  ], { stdio: 'ignore' });
  return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8'), certFile: cert };
}

async function judged(endpoint: string, deadlineMs = 5000): Promise<EstuaryError | undefined> {
  return diagnoseEndpoint(await probeEndpoint(endpoint, 'bkt', deadlineMs));
}

const answer = (status: number, contentType: string, body: string, location = ''): EndpointFacts => ({
  endpoint: 'http://s3.example.org:9000',
  deadlineMs: 5000,
  answer: { kind: 'answer', status, contentType, body, location },
  speaksTls: false,
});

describe('endpoint diagnosis', () => {
  it('lets S3 answers through, XML refusals included, and other refusals to the bucket check', () => {
    expect(diagnoseEndpoint(answer(200, 'application/xml', '<?xml version="1.0"?><LocationConstraint/>'))).toBeUndefined();
    expect(diagnoseEndpoint(answer(403, 'application/xml', '<Error><Code>AccessDenied</Code></Error>'))).toBeUndefined();
    expect(diagnoseEndpoint(answer(400, '', ''))).toBeUndefined();
    expect(diagnoseEndpoint(answer(502, 'text/html', '<html>Bad Gateway</html>'))).toBeUndefined();
    // Swift's s3api leaves unsigned requests to Swift, which refuses them so.
    expect(diagnoseEndpoint(answer(412, 'text/html; charset=UTF-8', 'Bad URL'))).toBeUndefined();
    expect(diagnoseEndpoint(answer(404, 'text/html', '<html><h1>Not Found</h1></html>'))).toBeUndefined();
  });

  it('names a web page, JSON, and a plain-HTTP site that redirects to https://', () => {
    expect(diagnoseEndpoint(answer(200, 'text/html', '<!doctype html><p>Console</p>'))?.code).toBe('ESTUARY_FS_NOT_S3');
    expect(diagnoseEndpoint(answer(200, 'text/plain', '<html><body>Welcome'))?.code).toBe('ESTUARY_FS_NOT_S3');
    expect(diagnoseEndpoint(answer(200, 'application/json', '{}'))?.message).toMatch(/JSON where S3 answers in XML/);
    const moved = diagnoseEndpoint(answer(301, 'text/html', '<html>Moved', 'https://s3.example.org/bkt?location'));
    expect(moved?.code).toBe('ESTUARY_ENDPOINT_NEEDS_TLS');
    expect(moved?.message).toMatch(/use https:\/\/s3\.example\.org$/);
  });

  it('takes only S3\'s XML for a success: plain text, an empty body, XHTML and HTML without <html> are not S3', () => {
    expect(diagnoseEndpoint(answer(200, 'application/xml', '<?xml version="1.0"?>\n<LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/">eu-west-1</LocationConstraint>'))).toBeUndefined();
    expect(diagnoseEndpoint(answer(200, 'application/xml', '<ListBucketResult xmlns="x"><Name>bkt</Name>'))).toBeUndefined();
    const notS3 = (status: number, type: string, body: string) => diagnoseEndpoint(answer(status, type, body))?.message;
    expect(notS3(200, 'text/plain', 'OK\n')).toMatch(/HTTP 200 with text "OK" where S3 answers in XML/);
    expect(notS3(204, '', '')).toMatch(/HTTP 204 with an empty body/);
    expect(notS3(200, 'application/xhtml+xml', '<?xml version="1.0"?>\n<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "x">\n<html xmlns="y">')).toMatch(/an HTML page/);
    expect(notS3(200, 'text/html', '<head><title>Portal</title></head>')).toMatch(/an HTML page/);
    expect(notS3(200, 'application/xml', '<?xml version="1.0"?><Health>ok</Health>')).toMatch(/XML <Health>/);
    // One line, whatever the body holds.
    expect(describeBody('line one\nline\ttwo\u0000', 'text/plain')).toBe('text "line one line two?"');
    expect(describeBody('x'.repeat(100), '')).toBe(`text "${'x'.repeat(40)}…"`);
    expect(isWebPage('<!-- a --><!-- b -->\n<!DOCTYPE html><p>')).toBe(true);
    expect(isWebPage('<Error><Code>AccessDenied</Code></Error>')).toBe(false);
  });

  it('names where a redirect points, and leaves S3\'s own redirects (in XML) to the bucket check', () => {
    const moved = diagnoseEndpoint(answer(302, '', 'moved', 'http://10.0.0.9:9000/elsewhere/bkt?location'));
    expect(moved?.code).toBe('ESTUARY_FS_ENDPOINT_REDIRECT');
    expect(moved?.exitCode).toBe(2);
    expect(moved?.message).toMatch(/redirects \(HTTP 302\) to http:\/\/10\.0\.0\.9:9000\/elsewhere\/bkt\?location/);
    expect(diagnoseEndpoint(answer(307, 'text/html', '<html>', 'https://u:pw@other.example.org/'))?.message).not.toContain('pw');
    const s3 = '<?xml version="1.0"?><Error><Code>TemporaryRedirect</Code><Endpoint>bkt.s3-eu-west-1.amazonaws.com</Endpoint></Error>';
    expect(diagnoseEndpoint(answer(307, 'application/xml', s3, 'https://bkt.s3-eu-west-1.amazonaws.com/'))).toBeUndefined();
  });

  it('names an HTML refusal as not S3 only for the bucket check to use, if it is refused too', () => {
    const page = '<!DOCTYPE html><html><title>Access denied</title>Blocked by the site proxy</html>';
    expect(diagnoseEndpoint(answer(403, 'text/html', page))).toBeUndefined();
    expect(webRefusal(answer(403, 'text/html', page))?.message).toMatch(/does not answer like S3 \(HTTP 403 with an HTML page, where S3 refuses in XML\)/);
    expect(webRefusal(answer(404, 'text/html', '<html><h1>Not Found</h1></html>'))?.code).toBe('ESTUARY_FS_NOT_S3');
    expect(webRefusal(answer(403, 'application/xml', '<Error><Code>AccessDenied</Code></Error>'))).toBeUndefined();
    // Swift's s3api leaves unsigned requests to Swift: its 412 must not turn bad keys into "not S3".
    expect(webRefusal(answer(412, 'text/html; charset=UTF-8', 'Bad URL'))).toBeUndefined();
  });

  it('says what came when the status line came and the body did not end in time', () => {
    const slow = diagnoseEndpoint({ ...answer(0, '', ''), answer: { kind: 'partial', status: 200, contentType: 'text/html', bytes: 13 } });
    expect(slow?.code).toBe('ESTUARY_FS_ENDPOINT_DOWN');
    expect(slow?.message).toMatch(/answered too slowly to use \(HTTP 200 text\/html came, but its body had not ended after 5 s: 13 bytes\)/);
    expect(slow?.message).not.toMatch(/no answer/);
  });

  it('names certificate refusals by kind, and leaves refused connections to the bucket check', () => {
    const failed = (code: string, message: string): EndpointFacts => ({
      ...answer(0, '', ''),
      endpoint: 'https://s3.example.org',
      answer: { kind: 'error', code, message },
    });
    expect(diagnoseEndpoint(failed('SELF_SIGNED_CERT_IN_CHAIN', 'self-signed certificate in certificate chain'))?.message).toMatch(/NODE_EXTRA_CA_CERTS/);
    expect(diagnoseEndpoint(failed('ERR_TLS_CERT_ALTNAME_INVALID', "Hostname/IP does not match certificate's altnames"))?.message).toMatch(/host name in --endpoint/);
    expect(diagnoseEndpoint(failed('CERT_HAS_EXPIRED', 'certificate has expired'))?.code).toBe('ESTUARY_FS_ENDPOINT_CERT');
    expect(diagnoseEndpoint(failed('ECONNREFUSED', 'connect ECONNREFUSED'))).toBeUndefined();
  });

  it('asks for the bucket path-style under the endpoint’s own path', () => {
    expect(probeUrl('http://h:9000', 'b').href).toBe('http://h:9000/b?location');
    expect(probeUrl('https://h/s3/', 'b').href).toBe('https://h/s3/b?location');
  });
});

describe('endpoint probe, against real listeners', () => {
  it('passes an S3 server', async () => {
    const s3 = await startS3rver({ buckets: ['bkt'] });
    expect(await judged(s3.endpoint)).toBeUndefined();
  });

  // Swift's s3api hands unsigned requests to Swift, which refuses them with 412 text/html.
  it.skipIf(!swift.ok)('passes Swift (s3api), which refuses unsigned requests in HTML', async () => {
    const server = await startSwift({ buckets: ['bkt'] });
    expect(await judged(server.endpoint)).toBeUndefined();
  }, 60_000);

  it.skipIf(!minio.ok)('passes MinIO', async () => {
    const server = await startMinio({ buckets: ['bkt'] });
    expect(await judged(server.endpoint)).toBeUndefined();
  }, 60_000);

  it('names a web server answering 200 HTML as not S3', async () => {
    const port = await listen(createHttp((_q, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hi</html>')));
    const err = await judged(`http://127.0.0.1:${port}`);
    expect(err?.code).toBe('ESTUARY_FS_NOT_S3');
    expect(err?.exitCode).toBe(2);
  });

  it('gives up on a port that accepts and never answers at its deadline', async () => {
    const port = await listen(createTcp((s) => s.on('error', () => {})));
    const started = Date.now();
    const err = await judged(`http://127.0.0.1:${port}`, 300);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(err?.code).toBe('ESTUARY_FS_ENDPOINT_DOWN');
    expect(err?.message).toMatch(/accepted the connection but sent no answer within 0.3 s/);
  });

  it('gives up on a body that trickles after the status line at its deadline, saying what came', async () => {
    const port = await listen(
      createHttp((_q, res) => {
        res.writeHead(200, { 'content-type': 'text/html' }).write('<');
        const tick = setInterval(() => res.write(' '), 50);
        res.on('close', () => clearInterval(tick));
      }),
    );
    const facts = await probeEndpoint(`http://127.0.0.1:${port}`, 'bkt', 400);
    expect(facts.answer).toMatchObject({ kind: 'partial', status: 200, contentType: 'text/html' });
    expect(diagnoseEndpoint(facts)?.message).toMatch(/HTTP 200 text\/html came, but its body had not ended after 0.4 s/);
  });

  it('resolves a relative Location against the address it asked', async () => {
    const port = await listen(createHttp((_q, res) => res.writeHead(301, { location: '/moved/' }).end()));
    const facts = await probeEndpoint(`http://127.0.0.1:${port}/s3`, 'bkt');
    expect(facts.answer).toMatchObject({ kind: 'answer', status: 301, location: `http://127.0.0.1:${port}/moved/` });
  });

  it('names http:// to a TLS port (a Node TLS server hangs up on plain HTTP)', async () => {
    const { key, cert } = await selfSigned();
    const port = await listen(createTls({ key, cert }, (s) => s.end()));
    const err = await judged(`http://127.0.0.1:${port}`);
    expect(err?.code).toBe('ESTUARY_ENDPOINT_NEEDS_TLS');
    expect(err?.message).toMatch(new RegExp(`use https://127\\.0\\.0\\.1:${port}$`));
  });

  it('names an https:// endpoint with a self-signed certificate, and https:// to plain HTTP', async () => {
    const { key, cert } = await selfSigned();
    const tlsPort = await listen(createTls({ key, cert }, (s) => s.end()));
    const untrusted = await judged(`https://127.0.0.1:${tlsPort}`);
    expect(untrusted?.code).toBe('ESTUARY_FS_ENDPOINT_CERT');
    expect(untrusted?.message).toMatch(/not trusted \(self-signed certificate\).*NODE_EXTRA_CA_CERTS/);
    const plainPort = await listen(createHttp((_q, res) => res.end('plain')));
    expect((await judged(`https://127.0.0.1:${plainPort}`))?.code).toBe('ESTUARY_ENDPOINT_NOT_TLS');
  });
});

describe.skipIf(!fuse.ok)('estuary mount through TLS with a private CA', () => {
  it('is refused without the CA, naming NODE_EXTRA_CA_CERTS, and mounts with it', async () => {
    const s3 = await startS3rver({ buckets: ['tlsbkt'] });
    const { key, cert, certFile } = await selfSigned();
    // TLS in front of the S3 server, as a site's load balancer would be.
    const upstream = Number(new URL(s3.endpoint).port);
    const port = await listen(
      createTls({ key, cert }, (client) => {
        const server = connect(upstream, '127.0.0.1');
        client.on('error', () => server.destroy());
        server.on('error', () => client.destroy());
        client.pipe(server).pipe(client);
      }),
    );
    const endpoint = `https://127.0.0.1:${port}`;
    const mnt = await tempDir('estuary-tls-mnt-');
    const refused = runEstuary(['mount', 'tlsbkt', mnt, '--endpoint', endpoint], serverEnv(s3));
    expect(await refused.exited).toBe(2);
    expect(refused.output()).toMatch(/not trusted \(self-signed certificate\).*NODE_EXTRA_CA_CERTS/);
    expect(refused.output().trim().split('\n')).toHaveLength(1);

    const child = runEstuary(['mount', 'tlsbkt', mnt, '--endpoint', endpoint, '--log-format', 'json'], {
      ...serverEnv(s3),
      NODE_EXTRA_CA_CERTS: certFile,
    });
    onTeardown(async () => {
      if (await isMounted(mnt)) await sh(`fusermount -uz '${mnt}'`);
      await child.stop('SIGKILL');
    });
    await child.waitFor(/"msg":"mounted /, 30_000);
    const w = await sh(`echo hello > '${mnt}/f' && cat '${mnt}/f'`, undefined, 30_000);
    expect(w.out).toBe('hello\n');
    expect(await child.stop('SIGTERM', 20_000)).toBe(0);
  }, 60_000);
});
