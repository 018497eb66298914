// A broker that refuses discovery's login is not an unreachable one, against the real RabbitMQ
// with a user the test creates: at start discovery exits 2 with ESTUARY_DISC_AMQP_AUTH and what to
// check; refused later, it says so in the log, on the page and in /metrics, and keeps retrying
// until the password is right again.

import { describe, expect, it } from 'vitest';
import { NODE, startChild } from '../helpers/process.ts';
import { rabbitmqAvailable, tempAmqpUser } from '../helpers/rabbitmq.ts';
import { eventually, startTestDiscovery, uniqueExchange } from './net.ts';

const rabbit = await rabbitmqAvailable();
const BIN = new URL('../../bin/estuary.js', import.meta.url).pathname;

describe.runIf(rabbit.ok)('discovery refused by the broker', async () => {
  const user = await tempAmqpUser();

  it('exits 2 at start with one line saying to check the user and password', async () => {
    const child = startChild(NODE, [
      BIN, 'discovery', '--listen', '127.0.0.1:0', '--amqp', user.url('wrong-password'),
      '--hmac-key', 'amqp-auth-test-secret', '--geo-db', 'none', '--no-verify',
    ]);
    const late = new Promise<string>((r) => setTimeout(() => r('still running'), 15_000).unref());
    expect(await Promise.race([child.exited, late])).toBe(2);
    const out = child.output();
    expect(out).not.toMatch(/cannot (reach|subscribe)/);
    expect(out.trim().split('\n').at(-1)).toBe(
      `estuary: the AMQP broker at amqp://127.0.0.1:5672 refused the login of user "${user.name}" ` +
        '(authentication refused, not unreachable); check the user name and password in --amqp ' +
        '(amqp://USER:PASSWORD@HOST) and that the user exists on the broker (rabbitmqctl list_users)',
    );
    expect(out).not.toContain('wrong-password');
  });

  it('refused later: logs it, shows it on the page and in /metrics, and keeps retrying', async () => {
    const d = await startTestDiscovery({ exchange: uniqueExchange(), amqpUrl: user.url() });
    expect(d.consumer.state()).toBe('connected');
    await user.setPassword('changed-by-the-test');
    await user.closeConnections();
    await eventually(() => d.consumer.state(), (s) => s === 'refused', 20_000);

    const page = await (await fetch(`${d.url}/`)).text();
    expect(page).toContain(`No heartbeat can arrive: the AMQP broker at amqp://127.0.0.1:5672 refused the login of user &quot;${user.name}&quot;`);
    const metrics = await (await fetch(`${d.url}/metrics`)).text();
    expect(metrics).toContain('estuary_discovery_broker{state="refused"} 1');
    expect(metrics).toContain('estuary_discovery_broker{state="connected"} 0');
    expect((await (await fetch(`${d.url}/healthz`)).json()) as unknown).toMatchObject({ amqp: 'refused' });
    const refusals = () => d.logLines().filter((l) => l.code === 'ESTUARY_DISC_AMQP_AUTH');
    await eventually(() => refusals().length, (n) => n >= 1);
    expect(String(refusals()[0]!.msg)).toMatch(/refused the login .*; retrying$/);
    expect(d.logLines().some((l) => /cannot subscribe/.test(String(l.msg)))).toBe(false);

    await user.setPassword(user.password);
    await eventually(() => d.consumer.state(), (s) => s === 'connected', 20_000);
    expect(await (await fetch(`${d.url}/metrics`)).text()).toContain('estuary_discovery_broker{state="connected"} 1');
  });
});
