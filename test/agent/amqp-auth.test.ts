// A broker that refuses the agent is not an unreachable one, against the real RabbitMQ with a user
// the test creates: at start the agent exits 2 with ESTUARY_AGENT_AMQP_AUTH and what to check;
// refused later (password changed, or publishing not permitted), it logs that with the code and
// keeps retrying until the broker lets it in again.

import { describe, expect, it } from 'vitest';
import { startAgent } from '../../agent/agent.ts';
import { onTeardown } from '../helpers/cleanup.ts';
import { NODE, startChild } from '../helpers/process.ts';
import { rabbitmqAvailable, tempAmqpUser } from '../helpers/rabbitmq.ts';
import { testLog } from '../discovery/fixtures.ts';
import { eventually, NEVER, startFakeCache, uniqueExchange } from '../discovery/net.ts';

const rabbit = await rabbitmqAvailable();
const BIN = new URL('../../bin/estuary.js', import.meta.url).pathname;

async function agentAs(amqpUrl: string, exchange: string) {
  const cache = await startFakeCache();
  const t = testLog();
  const agent = await startAgent({
    amqpUrl,
    exchange,
    cacheUrl: cache.url,
    intervalMs: 500,
    selfTestTimeoutMs: 2000,
    uuid: `agent-${Math.random().toString(16).slice(2)}`,
    hostname: 'cache.test',
    publicIp: '127.0.0.1',
    kind: 'squid',
    upstream: 'cvmfs',
    maxLoad: 1000,
    iface: 'lo',
    reconnectMaxMs: 300,
    log: t.log,
  });
  onTeardown(async () => {
    await agent.stop(NEVER);
  });
  const refusals = () => t.lines().filter((l) => l.code === 'ESTUARY_AGENT_AMQP_AUTH');
  return { agent, lines: t.lines, refusals };
}

describe.runIf(rabbit.ok)('agent refused by the broker', async () => {
  const user = await tempAmqpUser();

  it('exits 2 at start with one line saying to check the user and password', async () => {
    const child = startChild(NODE, [
      BIN, 'agent', '--amqp', user.url('wrong-password'), '--cache-url', 'http://127.0.0.1:1',
      '--cache-kind', 'squid', '--interface', 'lo', '--log-format', 'json',
    ]);
    const late = new Promise<string>((r) => setTimeout(() => r('still running'), 15_000).unref());
    expect(await Promise.race([child.exited, late])).toBe(2);
    const out = child.output();
    expect(out).not.toContain('cannot reach the AMQP broker');
    expect(out.trim().split('\n').at(-1)).toBe(
      `estuary: the AMQP broker at amqp://127.0.0.1:5672 refused the login of user "${user.name}" ` +
        '(authentication refused, not unreachable); check the user name and password in --amqp ' +
        '(amqp://USER:PASSWORD@HOST) and that the user exists on the broker (rabbitmqctl list_users)',
    );
  });

  it('refused later: logs it with its code, keeps retrying, and comes back', async () => {
    const { agent, lines, refusals } = await agentAs(user.url(), uniqueExchange());
    await eventually(() => agent.publisher.isConnected(), (c) => c);
    await user.setPassword('changed-by-the-test');
    await user.closeConnections();
    await eventually(() => refusals().length, (n) => n >= 2, 20_000);
    expect(agent.publisher.refusal()?.kind).toBe('login');
    expect(String(refusals()[0]!.msg)).toMatch(/refused the login of user .*; retrying$/);
    expect(lines().some((l) => l.msg === 'cannot reach the AMQP broker')).toBe(false);

    await user.setPassword(user.password);
    await eventually(() => agent.publisher.isConnected(), (c) => c, 20_000);
    expect(agent.publisher.refusal()).toBeUndefined();
  });

  it('refused publishing (no write permission on the exchange): says so, not "lost the broker"', async () => {
    const reader = await tempAmqpUser();
    const exchange = uniqueExchange();
    // May declare and read, may not write: the channel is closed at the first heartbeat.
    await reader.setPermissions('.*', '^$', '.*');
    const { agent, lines, refusals } = await agentAs(reader.url(), exchange);
    expect(await agent.tick()).not.toBe('published');
    await eventually(() => refusals().length, (n) => n >= 1, 20_000);
    expect(String(refusals()[0]!.msg)).toMatch(
      new RegExp(`refused user "${reader.name}" an operation on the exchange: ACCESS_REFUSED - access to exchange '${exchange}'.*; give the user configure, write and read permission`),
    );
    expect(lines().some((l) => l.msg === 'lost the AMQP broker; reconnecting')).toBe(false);
  });
});
