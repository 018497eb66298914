// `estuary agent` beside a gateway whose /estuary/v1/summary is version 1 but has an entry it
// does not expect (a holding without a name, no `prefixes`). The summary is an extra: the agent
// must still publish its heartbeat (without holdings), never stop heartbeating over it.

import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import amqp from 'amqplib';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import { AMQP_URL, rabbitmqAvailable } from '../../helpers/rabbitmq.ts';

afterAll(runTeardowns);

const rabbit = await rabbitmqAvailable();
const BIN = new URL('../../../bin/estuary.js', import.meta.url).pathname;

describe.runIf(rabbit.ok)('agent beside a gateway with an odd summary', () => {
  it('still publishes heartbeats', async () => {
    const gateway = createServer((req, res) => {
      if (req.url?.startsWith('/estuary/v1/summary')) res.end('{"version":1,"cache":{"diskBytes":5},"cvmfs":[{"bytes":3}]}');
      else if (req.url?.startsWith('/metrics')) res.end('estuary_gateway_bytes_sent_total 100\n');
      else res.end('ok');
    });
    await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r));
    onTeardown(() => new Promise<void>((r) => gateway.close(() => r())));
    const exchange = `atk-agent-${randomBytes(4).toString('hex')}`;

    const conn = await amqp.connect(AMQP_URL);
    onTeardown(() => conn.close().catch(() => undefined));
    const ch = await conn.createChannel();
    await ch.assertExchange(exchange, 'topic', { durable: false, autoDelete: true });
    const q = await ch.assertQueue('', { exclusive: true });
    await ch.bindQueue(q.queue, exchange, '#');
    const got: string[] = [];
    await ch.consume(q.queue, (m) => m && got.push(m.content.toString()), { noAck: true });

    const agent = startChild(NODE, [
      BIN, 'agent', '--amqp', AMQP_URL, '--exchange', exchange,
      '--cache-url', `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`,
      '--hmac-key', 'attack-agent-summary-secret', '--public-ip', '192.0.2.5', '--log-format', 'json',
    ]);
    onTeardown(() => agent.stop('SIGKILL', 1000).then(() => undefined));
    await agent.waitFor(/connected to the AMQP broker/, 15_000);
    await new Promise((r) => setTimeout(r, 4000));
    expect(agent.output()).not.toMatch(/heartbeat failed|TypeError/);
    expect(got.length).toBeGreaterThan(0);
  }, 30_000);
});
