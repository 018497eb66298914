// A broker address that accepts TCP connections but never answers the AMQP handshake (a
// half-dead broker, a load balancer with no backend, a wrong service on the port). Neither the
// agent nor discovery may wait on it forever without a word: "nothing fails silently".

import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { NODE, startChild } from '../../helpers/process.ts';

afterAll(runTeardowns);

const BIN = new URL('../../../bin/estuary.js', import.meta.url).pathname;

async function silentBroker(): Promise<number> {
  const held: Socket[] = [];
  const server = createServer((s) => held.push(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTeardown(() => {
    for (const s of held) s.destroy();
    server.close();
  });
  return (server.address() as AddressInfo).port;
}

const warnOrWorse = (out: string) =>
  out.split('\n').filter((l) => /"level":(40|50|60)/.test(l) && /broker|AMQP/i.test(l));

describe('a broker that accepts the connection and never answers', () => {
  it('agent and discovery each log a warning or error about it within 15 s', async () => {
    const port = await silentBroker();
    const amqpUrl = `amqp://u:p@127.0.0.1:${port}`;
    const cache = createServer((s) => s.end());
    await new Promise<void>((r) => cache.listen(0, '127.0.0.1', r));
    onTeardown(() => {
      cache.close();
    });
    const agent = startChild(NODE, [
      BIN, 'agent', '--amqp', amqpUrl, '--cache-url', `http://127.0.0.1:${(cache.address() as AddressInfo).port}`,
      '--hmac-key', 'attack-silent-broker-secret', '--public-ip', '192.0.2.5', '--log-format', 'json',
    ]);
    onTeardown(() => agent.stop('SIGKILL', 1000).then(() => undefined));
    const disc = startChild(NODE, [
      BIN, 'discovery', '--listen', '127.0.0.1:0', '--amqp', amqpUrl, '--hmac-key', 'attack-silent-broker-secret',
      '--geo-db', 'none', '--no-verify', '--log-format', 'json',
    ]);
    onTeardown(() => disc.stop('SIGKILL', 1000).then(() => undefined));
    await new Promise((r) => setTimeout(r, 15_000));
    expect(warnOrWorse(agent.output())).not.toEqual([]);
    expect(warnOrWorse(disc.output())).not.toEqual([]);
  }, 30_000);
});
