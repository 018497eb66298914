// Attacks on `estuary discover` (the worker-node client) from a lying discovery server and from
// the file system it writes into. Each test asserts the behaviour the docs promise.

import { execFile } from 'node:child_process';
import { lstat, readFile, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);

const BIN = new URL('../../../bin/estuary.js', import.meta.url).pathname;

async function listen(handler: Parameters<typeof createServer>[1]): Promise<number> {
  const server: Server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTeardown(() => new Promise<void>((r) => server.close(() => r())));
  return (server.address() as AddressInfo).port;
}

/** A stand-in cache: answers any absolute-form GET with a small file. */
function goodProxy(): Promise<number> {
  return listen((_req, res) => res.end('whitelist'));
}

/** A discovery server that answers every /nearest* with the given Shoal-shaped caches. */
function lyingDiscovery(caches: object[]): Promise<number> {
  const body = JSON.stringify(Object.fromEntries(caches.map((c, i) => [String(i), c])), null, 0);
  return listen((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(body);
  });
}

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, 'discover', '--log-format', 'json', ...args], { timeout: 20_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('discover against a server that offers a malformed address', () => {
  it('skips the malformed entry and applies the working cache (no crash)', async () => {
    const proxyPort = await goodProxy();
    const server = await lyingDiscovery([
      { hostname: 'bad', squid_port: 3128, public_ip: 'a b"$(x)' },
      { hostname: 'good', squid_port: proxyPort, public_ip: '127.0.0.1' },
    ]);
    const r = await run(['--server', `http://127.0.0.1:${server}`, '--test-url', 'http://example.org/x', '--fallback', 'DIRECT']);
    expect(r.stderr).not.toMatch(/unexpected failure|ReferenceError/);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(`http://127.0.0.1:${proxyPort};DIRECT`);
  });

  it('--pac --no-test does not crash on an address that is not a host name', async () => {
    const server = await lyingDiscovery([
      { hostname: 'bad', squid_port: 3128, public_ip: '10.0.0.1:3128;DIRECT;http://evil' },
      { hostname: 'good', squid_port: 3128, public_ip: '10.0.0.2' },
    ]);
    const r = await run(['--server', `http://127.0.0.1:${server}`, '--no-test', '--pac']);
    expect(r.stderr).not.toMatch(/unexpected failure|TypeError/);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('PROXY http://10.0.0.2:3128');
    expect(r.stdout).not.toContain('evil');
  });

  it('--no-test --write never lets an offered address add extra proxies (;) to CVMFS_HTTP_PROXY', async () => {
    const dir = await tempDir('atk-disc-');
    const file = join(dir, 'default.local');
    await writeFile(file, 'CVMFS_REPOSITORIES=atlas.cern.ch\n');
    const server = await lyingDiscovery([
      { hostname: 'bad', squid_port: 3128, public_ip: '10.0.0.1:3128;DIRECT;http://evil' },
      { hostname: 'good', squid_port: 3128, public_ip: '10.0.0.2' },
    ]);
    await run(['--server', `http://127.0.0.1:${server}`, '--no-test', '--write', file]);
    const text = await readFile(file, 'utf8');
    expect(text).not.toContain('evil');
    expect(text).not.toMatch(/CVMFS_HTTP_PROXY="[^"]*DIRECT/);
  });
});

describe('discover --write through a symlink', () => {
  it('updates the file the link points at and keeps the link', async () => {
    const dir = await tempDir('atk-disc-');
    const target = join(dir, 'managed.local');
    const link = join(dir, 'default.local');
    await writeFile(target, 'CVMFS_REPOSITORIES=atlas.cern.ch\nCVMFS_HTTP_PROXY="http://old:3128"\n');
    await symlink(target, link);
    const r = await run(['--fallback', 'http://new.example.org:3128', '--write', link, '--log-level', 'error']);
    expect(r.code).toBe(0);
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect(await readFile(target, 'utf8')).toContain('CVMFS_HTTP_PROXY="http://new.example.org:3128"');
  });
});

describe('discover --write when the config file cannot be read', () => {
  it('changes nothing and says so (ESTUARY_DISC_WRITE-style error), never drops the other lines', async () => {
    const { chmod, chown, mkdtemp } = await import('node:fs/promises');
    const { execFileSync } = await import('node:child_process');
    const { userInfo } = await import('node:os');
    if (userInfo().uid !== 0) return; // needs root to run the client as another user
    const nobody = Number(execFileSync('id', ['-u', 'nobody']).toString().trim());
    const dir = await mkdtemp('/tmp/atk-disc-unreadable-');
    onTeardown(() => import('node:fs/promises').then((fs) => fs.rm(dir, { recursive: true, force: true })));
    const file = join(dir, 'default.local');
    const original = 'CVMFS_REPOSITORIES=atlas.cern.ch\nCVMFS_QUOTA_LIMIT=20000\nCVMFS_HTTP_PROXY="http://old:3128"\n';
    await writeFile(file, original);
    await chown(dir, nobody, 0);
    await chown(file, nobody, 0);
    await chmod(file, 0o200); // writable, not readable, by the user cron runs the client as
    const r = await new Promise<{ code: number; stderr: string }>((resolve) =>
      execFile('runuser', ['-u', 'nobody', '--', process.execPath, BIN, 'discover', '--fallback', 'http://f:3128', '--write', file, '--log-format', 'json'],
        { timeout: 20_000 }, (err, _o, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr })),
    );
    await chmod(file, 0o600);
    expect(await readFile(file, 'utf8')).toBe(original);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n').at(-1)).toMatch(/^estuary: .*default\.local/);
  });
});
