// `estuary discover` as cron runs it: a real process asking a real discovery server (fed over
// RabbitMQ), testing each offered proxy with a real fetch, and applying the result.

import { chmod, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE, startChild } from '../../helpers/process.ts';
import { rabbitmqAvailable } from '../../helpers/rabbitmq.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { heartbeat } from '../fixtures.ts';
import {
  eventually,
  rawPublisher,
  startFakeCache,
  startOrigin,
  startTestDiscovery,
  uniqueExchange,
} from '../net.ts';

const rabbit = await rabbitmqAvailable();
const BIN = new URL('../../../bin/estuary.js', import.meta.url).pathname;

async function discover(args: string[]) {
  const child = startChild(NODE, [BIN, 'discover', '--log-format', 'json', ...args]);
  const code = await child.exited;
  const out = child.output();
  return {
    code,
    out,
    stdout: out
      .split('\n')
      // Log lines are JSON objects; a PAC file's lone "{" is not one.
      .filter((l) => l !== '' && (l === '{' || !l.startsWith('{')))
      .join('\n'),
  };
}

describe.runIf(rabbit.ok)('estuary discover', async () => {
  const exchange = uniqueExchange();
  const origin = await startOrigin();
  const a = await startFakeCache();
  const b = await startFakeCache();
  const bad = await startFakeCache();
  bad.mode = 'denied';
  const d = await startTestDiscovery({ exchange });
  const publish = await rawPublisher(exchange);
  for (const [id, c] of [
    ['a', a],
    ['b', b],
    ['bad', bad],
  ] as const) {
    await publish(
      heartbeat({
        uuid: id,
        hostname: `${id}.test`,
        cache_port: c.port,
        public_ip: '127.0.0.1',
        upstream: 'cvmfs',
      }),
    );
  }
  await eventually(
    () => d.registry.size,
    (n) => n === 3,
  );
  const common = ['--server', d.url, '--test-url', origin.testUrl];

  it('prints the proxies that passed the test fetch, dropping the one that failed', async () => {
    const r = await discover([...common, '-n', '5']);
    expect(r.code).toBe(0);
    expect(r.stdout.split(';').sort()).toEqual([a.url, b.url].sort());
  });

  it('writes CVMFS_HTTP_PROXY atomically, keeping every other line and the old proxies as fallbacks', async () => {
    const dir = await tempDir();
    const file = join(dir, 'default.local');
    const before =
      '# managed by hand\nCVMFS_REPOSITORIES=atlas.cern.ch\nCVMFS_HTTP_PROXY="http://site-squid:3128;DIRECT"\nCVMFS_QUOTA_LIMIT=20000\n';
    await writeFile(file, before);
    await chmod(file, 0o640);
    const r = await discover([...common, '--write', file]);
    expect(r.code).toBe(0);
    const after = await readFile(file, 'utf8');
    const lines = after.split('\n');
    expect(lines.filter((l) => !l.startsWith('CVMFS_HTTP_PROXY'))).toEqual(
      before.split('\n').filter((l) => !l.startsWith('CVMFS_HTTP_PROXY')),
    );
    const value = /CVMFS_HTTP_PROXY="([^"]+)"/.exec(after)![1]!.split(';');
    expect(value.slice(0, 2).sort()).toEqual([a.url, b.url].sort());
    expect(value.slice(2)).toEqual(['http://site-squid:3128', 'DIRECT']);
    expect((await stat(file)).mode & 0o777).toBe(0o640);
    expect(await readdir(dir)).toEqual(['default.local']);
  });

  it('says nothing when --write succeeds, though a server and a proxy failed, unless -v', async () => {
    const dir = await tempDir();
    const file = join(dir, 'default.local');
    await writeFile(file, 'CVMFS_HTTP_PROXY="DIRECT"\n');
    const args = ['--server', `http://127.0.0.1:9,${d.url}`, '--test-url', origin.testUrl, '--write', file];
    const quiet = await discover(args);
    expect(quiet.code).toBe(0);
    expect(quiet.out).toBe('');
    expect(await readFile(file, 'utf8')).toContain(a.url);
    const loud = await discover([...args, '-v']);
    expect(loud.code).toBe(0);
    const messages = loud.out
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(messages).toEqual(['discovery server did not answer', 'proxy failed the test fetch', 'proxies chosen']);
  });

  it('prints a PAC file', async () => {
    const r = await discover([...common, '--pac', '--fallback', 'DIRECT']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^function FindProxyForURL\(url, host\)\n\{\n {4}return "PROXY http:\/\/127\.0\.0\.1:\d+;PROXY http:\/\/127\.0\.0\.1:\d+; DIRECT";\n\}$/,
    );
  });

  it('falls back to the configured proxies when discovery is unreachable', async () => {
    const r = await discover([
      '--server',
      'http://127.0.0.1:9',
      '--fallback',
      'http://backup:3128,DIRECT',
      '--server-timeout',
      '1s',
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('http://backup:3128;DIRECT');
  });

  it('changes nothing and exits 1 when discovery is unreachable and there is no fallback', async () => {
    const dir = await tempDir();
    const file = join(dir, 'default.local');
    await writeFile(file, 'CVMFS_REPOSITORIES=atlas.cern.ch\n');
    const r = await discover(['--server', 'http://127.0.0.1:9', '--write', file, '--server-timeout', '1s']);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/estuary: no discovery server answered .* nothing was changed/);
    expect(await readFile(file, 'utf8')).toBe('CVMFS_REPOSITORIES=atlas.cern.ch\n');
  });

  it('refuses two outputs at once', async () => {
    const r = await discover([...common, '--pac', '--print']);
    expect(r.code).toBe(2);
    expect(r.out.trim()).toBe('estuary: choose one of --print, --write FILE and --pac');
  });
});
