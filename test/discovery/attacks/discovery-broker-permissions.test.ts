// A broker that lets discovery log in but refuses its queue (no configure/write/read permission
// on the virtual host). ERRORS.md: ESTUARY_DISC_AMQP_AUTH also covers "a user without permission
// to declare its queue or bind it to the exchange": exit 2 with one line at start, logged, shown
// and retried later. Never a stack trace, never a crash.

import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import { rabbitmqAvailable, tempAmqpUser } from '../../helpers/rabbitmq.ts';

afterAll(runTeardowns);

const rabbit = await rabbitmqAvailable();
const BIN = new URL('../../../bin/estuary.js', import.meta.url).pathname;

function start(amqpUrl: string) {
  const child = startChild(NODE, [
    BIN, 'discovery', '--listen', '127.0.0.1:0', '--amqp', amqpUrl, '--exchange', `atk-perm-${process.pid}`,
    '--hmac-key', 'attack-permissions-secret', '--geo-db', 'none', '--no-verify', '--log-format', 'json',
  ]);
  onTeardown(() => child.stop('SIGKILL', 1000).then(() => undefined));
  return child;
}

describe.runIf(rabbit.ok)('discovery whose user may log in but not use its queue', () => {
  it('at start: exits 2 with one line, no stack trace', async () => {
    const user = await tempAmqpUser();
    await user.setPermissions('', '', '');
    const child = start(user.url());
    const late = new Promise<string>((r) => setTimeout(() => r('still running'), 15_000).unref());
    const code = await Promise.race([child.exited, late]);
    const out = child.output();
    expect(out).not.toMatch(/safe_emit|at Channel\.accept|Node\.js v/);
    expect(code).toBe(2);
    expect(out.trim().split('\n').at(-1)).toMatch(/^estuary: .*(permission|refused)/);
  });

  it('revoked while running: stays up, reports "refused", recovers when permissions return', async () => {
    const user = await tempAmqpUser();
    const child = start(user.url());
    const m = await child.waitFor(/"url":"(http:\/\/127\.0\.0\.1:\d+)"[^\n]*discovery listening/, 20_000);
    await child.waitFor(/consuming heartbeats/, 20_000);
    const url = m[1]!;
    await user.setPermissions('', '', '');
    await user.closeConnections();
    const died = await Promise.race([
      child.exited.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 6000)),
    ]);
    expect(child.output()).not.toMatch(/safe_emit|at Channel\.accept|Node\.js v/);
    expect(died).toBe(false);
    expect(await (await fetch(`${url}/metrics`)).text()).toContain('estuary_discovery_broker{state="refused"} 1');
    await user.setPermissions('.*', '.*', '.*');
    await child.waitFor(/consuming heartbeats[^]*consuming heartbeats/, 40_000);
  });
});
