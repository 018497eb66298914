// Attacks on the pre-mount endpoint probe (fuse/endpoint-probe.ts, endpoint-diagnosis.ts): servers
// that are not S3 but answer in ways the probe does not judge. `estuary mount --help` promises that
// the first unsigned request "must be answered ... like S3 (XML, not a web page)"; docs/ERRORS.md
// says ESTUARY_FS_NOT_S3 is for "a web console, a portal, a typo in the port or path". A user who
// points --endpoint at the wrong port must get that line, not an empty bucket mounted (whose first
// `ls` fails with EIO, or which silently swallows writes) nor advice about credentials.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { isMounted } from '../../../fuse/mount-table.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, runEstuary, serverEnv, sh } from '../mount-helpers.ts';

afterAll(runTeardowns);

interface Canned {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

/** A web server that answers every request (probe, HEAD bucket, listings) with the same thing. */
async function cannedServer(answer: Canned): Promise<string> {
  const srv = http.createServer((req, res) => {
    req.resume();
    res.writeHead(answer.status, answer.headers ?? {});
    res.end(req.method === 'HEAD' ? undefined : (answer.body ?? ''));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  onTeardown(() => new Promise<void>((r) => srv.close(() => r())));
  return `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
}

const KEYS = { ...process.env, AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'y', AWS_REGION: 'us-east-1' };

/** Runs `estuary mount`; if it mounts, unmounts at once. What it printed, its exit, whether it mounted. */
async function tryMount(endpoint: string, env: NodeJS.ProcessEnv = KEYS) {
  const dir = await tempDir('estuary-atk-probe-');
  const child = runEstuary(['mount', 'kek-data', dir, '--endpoint', endpoint, '--retries', '1'], env);
  onTeardown(async () => {
    if (await isMounted(dir)) await sh(`fusermount -uz '${dir}'`);
  });
  const mounted = await Promise.race([
    child.waitFor(/mounted kek-data/, 40_000).then(() => true, () => false),
    child.exited.then(() => false),
  ]);
  if (mounted) {
    await sh(`fusermount -u '${dir}' || fusermount -uz '${dir}'`);
  }
  const code = await child.stop('SIGTERM', 5000);
  return { mounted, code, out: child.output() };
}

describe.runIf(fuseAvailable().ok)('the endpoint probe, lied to by web servers that are not S3', () => {
  // Expected for all of these: refused before mounting, exit 2, the ESTUARY_FS_NOT_S3 line
  // ("does not answer like S3 ... check its host, port and path").
  const notS3: [string, Canned][] = [
    ['a health check answering 200 "OK" as text/plain', { status: 200, headers: { 'content-type': 'text/plain' }, body: 'OK\n' }],
    ['a catch-all answering 200 with an empty body', { status: 200 }],
    [
      'an XHTML page (starts with <?xml, application/xhtml+xml)',
      {
        status: 200,
        headers: { 'content-type': 'application/xhtml+xml' },
        body:
          '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">\n' +
          '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Portal</title></head><body>Welcome</body></html>',
      },
    ],
    [
      'an HTML page that leaves out the optional <html> tag',
      { status: 200, headers: { 'content-type': 'text/html' }, body: '<head><title>Portal</title></head><body>Welcome</body>' },
    ],
    [
      'an HTML page that opens with two comments',
      {
        status: 200,
        headers: { 'content-type': 'text/html' },
        body: '<!-- generated --><!-- by the portal -->\n<!DOCTYPE html><html><body>Welcome</body></html>',
      },
    ],
  ];
  for (const [what, answer] of notS3) {
    it(`refuses ${what} with ESTUARY_FS_NOT_S3, and does not mount it`, async () => {
      const r = await tryMount(await cannedServer(answer));
      expect(r.mounted, r.out).toBe(false);
      expect(r.code, r.out).toBe(2);
      expect(r.out).toMatch(/does not answer like S3/);
    }, 60_000);
  }

  // A web proxy or a WAF in front of the wrong host answers every request with a 403 block page in
  // HTML. Today the signed bucket check turns that into ESTUARY_FS_ACCESS_DENIED, whose advice
  // ("check AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY ... and the bucket policy") sends the user after
  // credentials that were never looked at. S3 refuses in XML; an HTML refusal is not S3 speaking.
  it('does not blame the credentials for a 403 HTML block page that is not S3', async () => {
    const r = await tryMount(
      await cannedServer({
        status: 403,
        headers: { 'content-type': 'text/html' },
        body: '<!DOCTYPE html><html><head><title>Access denied</title></head><body>Blocked by the site proxy</body></html>',
      }),
    );
    expect(r.mounted, r.out).toBe(false);
    expect(r.code, r.out).toBe(2);
    expect(r.out).not.toMatch(/AWS_ACCESS_KEY_ID|bucket policy/);
    expect(r.out).toMatch(/does not answer like S3|not an S3|web page|HTML/i);
  }, 60_000);

  // A load balancer or an old address that redirects elsewhere (another host, another port). The
  // S3 client does not follow redirects, and today the mount reports "cannot reach the S3 endpoint
  // ... (Unknown (HTTP 302): UnknownError)", exit 1: it was reached, it said where to go. Expected:
  // a one-line refusal (exit 2, bad input) that names the address it redirects to.
  it('names where a redirecting endpoint points instead of calling it unreachable', async () => {
    const target = 'http://127.0.0.1:9/elsewhere/';
    const r = await tryMount(await cannedServer({ status: 302, headers: { location: target }, body: 'moved' }));
    expect(r.mounted, r.out).toBe(false);
    expect(r.out).not.toMatch(/UnknownError/);
    expect(r.out).toContain('127.0.0.1:9');
    expect(r.code, r.out).toBe(2);
  }, 60_000);
});

describe.runIf(fuseAvailable().ok)('the endpoint probe, given odd addresses', () => {
  // Port 0 passes the URL check; the probe's connection to port 0 is refused and left to the
  // bucket check, whose client takes port 0 for "no port" and connects to port 80 instead: the
  // line says "ECONNREFUSED 127.0.0.1:80" (exit 1), a port the user never gave, and where something
  // listens on 80 the mount would use it. Expected: refused as bad input (exit 2) before any
  // connection, like port 65536 ("invalid value ... for --endpoint").
  it('refuses port 0 as bad input instead of trying port 80', async () => {
    const r = await tryMount('http://127.0.0.1:0');
    expect(r.mounted, r.out).toBe(false);
    expect(r.out).not.toMatch(/:80\b/);
    expect(r.code, r.out).toBe(2);
  }, 60_000);

  // S3 signs requests with the AWS keys; a user name and password in --endpoint are never S3's.
  // Today they are accepted and the password is written to the log ("mounted ..." carries
  // `endpoint` as typed), and stored in the --write-back journal's identity file. Expected: the
  // password is never printed (refuse such an address in one line, or hide it as `***`).
  it('never prints a password given in --endpoint', async () => {
    const s3 = await startS3rver({ buckets: ['kek-data'] });
    const r = await tryMount(`http://alice:s3cr3t-pw@127.0.0.1:${s3.port}`, serverEnv(s3));
    expect(r.out).not.toContain('s3cr3t-pw');
  }, 60_000);

  // A server that sends its status line and headers at once and then trickles the body (a web
  // page behind a slow link) is reported as one that "accepted the connection but sent no answer
  // within 5 s" — it did answer, with HTTP 200. Expected: the refusal says what came (an answer
  // too slow to read), not that nothing did.
  it('does not call an endpoint that answered 200 and trickles its body silent', async () => {
    const srv = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<');
      const tick = setInterval(() => res.write(' '), 200);
      res.on('close', () => clearInterval(tick));
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    onTeardown(() => {
      srv.closeAllConnections();
      return new Promise<void>((r) => srv.close(() => r()));
    });
    const r = await tryMount(`http://127.0.0.1:${(srv.address() as AddressInfo).port}`);
    expect(r.mounted, r.out).toBe(false);
    expect(r.out).not.toMatch(/sent no answer/);
  }, 60_000);
});
