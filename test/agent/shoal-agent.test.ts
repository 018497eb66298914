// The real shoal-agent (PyPI 1.0.2) registering with estuary discovery through RabbitMQ, unchanged.
// The agent reads its interfaces, its conf file at the fixed path /etc/shoal/shoal_agent.conf, and
// asks public STUN servers for its address when it starts. So it runs in a network namespace of
// its own (a veth pair to this host, no route anywhere else: its STUN and DNS packets fail at
// once and nothing leaves the host) and a mount namespace where /etc/shoal is a temporary
// directory. A stand-in Squid in the namespace answers the agent's own test fetch.

import { execFile, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rmdir, writeFile } from 'node:fs/promises';
import { createServer as createTcpServer, connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { onTeardown } from '../helpers/cleanup.ts';
import { NODE, startChild } from '../helpers/process.ts';
import { rabbitmqAvailable } from '../helpers/rabbitmq.ts';
import { required } from '../helpers/services.ts';
import { tempDir } from '../helpers/tmp.ts';
import { eventually, getJson, startTestDiscovery, uniqueExchange } from '../discovery/net.ts';
import { cleanEnv, shoalVenv } from '../discovery/shoal-programs.ts';

const run = promisify(execFile);
const rabbit = await rabbitmqAvailable();
const canNetns =
  process.getuid?.() === 0 && spawnSync('ip', ['netns', 'list'], { stdio: 'ignore' }).status === 0;
const netns = required('network namespaces (root and iproute2)', canNetns, 'run the tests as root');
const venv = rabbit.ok && netns.ok ? await shoalVenv() : { ok: false, dir: '' };

/** A namespace joined to this host by a veth pair on 10.213.<n>.0/30, deleted after the file. */
async function namespaceWithLink(): Promise<{ name: string; host: string; inside: string }> {
  const tag = randomBytes(3).toString('hex');
  const name = `est-shoal-${tag}`;
  const hostIf = `esh${tag}`;
  const n = Number.parseInt(tag.slice(0, 2), 16);
  const host = `10.213.${n}.1`;
  const inside = `10.213.${n}.2`;
  await run('ip', ['netns', 'add', name]);
  onTeardown(() => run('ip', ['netns', 'del', name]).then(() => undefined));
  await run('ip', ['link', 'add', hostIf, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', name]);
  onTeardown(() => run('ip', ['link', 'del', hostIf]).then(() => undefined, () => undefined));
  await run('ip', ['addr', 'add', `${host}/30`, 'dev', hostIf]);
  await run('ip', ['link', 'set', hostIf, 'up']);
  const inNs = (...args: string[]) => run('ip', ['netns', 'exec', name, ...args]);
  await inNs('ip', 'addr', 'add', `${inside}/30`, 'dev', 'eth0');
  await inNs('ip', 'link', 'set', 'eth0', 'up');
  await inNs('ip', 'link', 'set', 'lo', 'up');
  return { name, host, inside };
}

/** Relays host:port (on the veth) to the local broker, so the broker needs no extra listener. */
async function brokerRelay(host: string): Promise<number> {
  const server = createTcpServer((c) => {
    const up = connect(5672, '127.0.0.1');
    c.pipe(up).pipe(c);
    const end = () => (c.destroy(), up.destroy());
    c.on('error', end).on('close', end);
    up.on('error', end).on('close', end);
  });
  server.listen(0, host);
  await once(server, 'listening');
  onTeardown(() => new Promise<void>((r) => server.close(() => r())));
  return (server.address() as { port: number }).port;
}

const STAND_IN = `
const http = require('node:http');
http.createServer((req, res) => {
  const repo = /\\/cvmfs\\/([^/]+)\\//.exec(req.url || '');
  res.end(repo ? 'N' + repo[1] + '\\n' : '');
}).listen(Number(process.argv[1]), process.argv[2], () => console.log('ready'));
`;

describe.runIf(rabbit.ok && venv.ok)('the real shoal-agent 1.0.2', async () => {
  const exchange = uniqueExchange();
  const d = await startTestDiscovery({ exchange, shoalCompat: true, allowHostAddresses: false });
  const ns = await namespaceWithLink();
  const amqpPort = await brokerRelay(ns.host);
  const squidPort = 3130;
  const standIn = startChild('ip', ['netns', 'exec', ns.name, NODE, '-e', STAND_IN, String(squidPort), ns.inside]);
  await standIn.waitFor(/ready/);

  // /etc/shoal must exist to be mounted over; it is made (empty) only if missing, and removed.
  if (!existsSync('/etc/shoal')) {
    await mkdir('/etc/shoal');
    onTeardown(() => rmdir('/etc/shoal').catch(() => undefined));
  }
  const etc = await tempDir();
  const log = join(etc, 'shoal_agent.log');
  // As an operator writes it: external_ip for a cloud cache behind a floating IP, and
  // max_load/cache port as strings, which is how the agent sends them on.
  await writeFile(
    join(etc, 'shoal_agent.conf'),
    [
      '[general]',
      'interval = 1',
      'external_ip = 198.51.100.7',
      `squid_port = ${squidPort}`,
      'max_load = 50000',
      '[rabbitmq]',
      `amqp_server_url = ${ns.host}`,
      `amqp_port = ${amqpPort}`,
      `amqp_exchange = ${exchange}`,
      '[logging]',
      `log_file = ${log}`,
      'logging_level = INFO',
      '',
    ].join('\n'),
  );
  const agent = startChild(
    'ip',
    [
      'netns', 'exec', ns.name, 'unshare', '-m', 'sh', '-c',
      `mount --bind '${etc}' /etc/shoal && exec '${venv.dir}/bin/python' '${venv.dir}/bin/shoal-agent'`,
    ],
    { env: cleanEnv({}) },
  );

  it('registers through RabbitMQ with its external address as the public one', async () => {
    const e = await eventually(
      () => [...d.registry.values()][0],
      (x) => x !== undefined,
      30_000,
    ).catch(async (err) => {
      throw new Error(`${(err as Error).message}\nagent output: ${agent.output()}`, { cause: err });
    });
    expect(e).toMatchObject({
      port: squidPort,
      privateIp: ns.inside,
      externalIp: '198.51.100.7',
      publicIp: '198.51.100.7',
      maxLoad: 50000,
      auth: 'unsigned',
    });
    const all = await getJson<Record<string, { public_ip: string; squid_port: number }>>(`${d.url}/all`);
    expect(all['0']).toMatchObject({ public_ip: '198.51.100.7', squid_port: squidPort });
    expect(d.logLines().filter((l) => l.msg === 'heartbeat dropped')).toEqual([]);
  });
});
