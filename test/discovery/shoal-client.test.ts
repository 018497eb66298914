// The real shoal-client (PyPI) against estuary discovery: it asks /nearest/N, reads the answer with
// its regular expressions, tests each cache through a stand-in Squid, and hands the proxy list to
// cvmfs_talk, here a recording stand-in on PATH. Fed by heartbeats in the bytes a PyPI
// shoal-agent publishes, through RabbitMQ.

import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile, chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { rabbitmqAvailable } from '../helpers/rabbitmq.ts';
import { tempDir } from '../helpers/tmp.ts';
import { eventually, rawPublisher, startTestDiscovery, uniqueExchange } from './net.ts';
import { cleanEnv, deadPort, shoalVenv, startWhitelistProxy } from './shoal-programs.ts';

const rabbit = await rabbitmqAvailable();
const venv = rabbit.ok ? await shoalVenv() : { ok: false, dir: '' };

/** A PyPI shoal-agent 1.0.2 heartbeat, json.dumps bytes, port and max_load from its conf file. */
function agentBytes(uuid: string, port: number, addr: Record<string, string>): string {
  const ips = Object.entries(addr)
    .map(([k, v]) => `"${k}": "${v}", `)
    .join('');
  return (
    `{"uuid": "${uuid}", "hostname": "${uuid}.example.org", "squid_port": "${port}", "verified": false, ` +
    `"max_load": "50000", ${ips}"timestamp": ${Date.now() / 1000}, "load": 0.0}`
  );
}

describe.runIf(rabbit.ok && venv.ok)('the real shoal-client 1.0.4', async () => {
  const exchange = uniqueExchange();
  const d = await startTestDiscovery({ exchange, shoalCompat: true });
  const publish = await rawPublisher(exchange);
  const a = await startWhitelistProxy();
  const b = await startWhitelistProxy();
  const dead = await deadPort();
  // a: a public address; b: behind NAT, only external_ip (Shoal's server makes it the public one);
  // c: nothing answers, so the client's own test must drop it.
  await publish(agentBytes('a', a.port, { public_ip: '127.0.0.1', private_ip: '10.7.0.2' }));
  await publish(agentBytes('b', b.port, { external_ip: '127.0.0.1', private_ip: '10.7.0.3' }));
  await publish(agentBytes('c', dead, { public_ip: '127.0.0.1' }));
  await eventually(
    () => d.registry.size,
    (n) => n === 3,
  );

  const home = await tempDir();
  const bin = join(home, 'bin');
  await mkdir(join(home, '.shoal'));
  await mkdir(bin);
  await writeFile(
    join(home, '.shoal', 'shoal_client.conf'),
    `[general]\nshoal_server_url = ${d.url}/nearest\ndefault_squid_proxy = DIRECT\n`,
  );
  const record = join(home, 'cvmfs_talk.args');
  await writeFile(join(bin, 'cvmfs_talk'), `#!/bin/sh\nprintf '%s\\n' "$@" > '${record}'\necho ok\n`);
  await chmod(join(bin, 'cvmfs_talk'), 0o755);
  const env = cleanEnv({ HOME: home, PATH: `${bin}:${venv.dir}/bin:/usr/bin:/bin` });
  const client = (args: string[]) =>
    promisify(execFile)(join(venv.dir, 'bin', 'shoal-client'), ['--skip-broadcast', ...args], {
      env,
      timeout: 60_000,
    });

  it('sets the two working caches, then DIRECT, through cvmfs_talk', async () => {
    await client(['-n', '2']);
    const [verb, sub, value] = (await readFile(record, 'utf8')).trimEnd().split('\n');
    expect([verb, sub]).toEqual(['proxy', 'set']);
    const proxies = value!.split(';');
    expect(proxies.slice(0, 2).sort()).toEqual(
      [`http://127.0.0.1:${a.port}`, `http://127.0.0.1:${b.port}`].sort(),
    );
    expect(proxies.slice(2)).toEqual(['DIRECT']);
    // Four whitelist paths, fetched twice (the test, then the timing), through each live cache.
    expect(a.hits()).toBeGreaterThanOrEqual(4);
    expect(b.hits()).toBeGreaterThanOrEqual(4);
  });

  it('prints the same list with --dump, honouring -n', async () => {
    const { stdout } = await client(['--dump', '-n', '1']);
    expect(stdout.trim()).toMatch(new RegExp(`^"http://127\\.0\\.0\\.1:(${a.port}|${b.port});DIRECT"$`));
  });
});
