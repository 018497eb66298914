// The harness itself: real services start, answer, and leave nothing behind.

import { CreateBucketCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { s3Client } from '../../bench/s3.ts';
import amqp from 'amqplib';
import { describe, expect, it } from 'vitest';
import { AMQP_URL, rabbitmqAvailable } from './rabbitmq.ts';
import { portOpen } from './services.ts';
import { startS3rver } from './s3rver.ts';
import { startChild } from './process.ts';

describe('s3rver', () => {
  it('starts on a random loopback port, stores objects, and stops', async () => {
    const s3 = await startS3rver({ buckets: ['preset'] });
    const client = s3Client(s3);
    await client.send(new CreateBucketCommand({ Bucket: 'harness' }));
    await client.send(new PutObjectCommand({ Bucket: 'harness', Key: 'a/b.txt', Body: 'hello' }));
    const got = await client.send(new GetObjectCommand({ Bucket: 'harness', Key: 'a/b.txt' }));
    expect(await got.Body!.transformToString()).toBe('hello');
    await client.send(new PutObjectCommand({ Bucket: 'preset', Key: 'k', Body: 'x' }));
    client.destroy();
    await s3.stop();
    expect(await portOpen('127.0.0.1', s3.port)).toBe(false);
  });
});

const rabbit = await rabbitmqAvailable();
describe.runIf(rabbit.ok)('RabbitMQ', () => {
  it('round-trips a message on a private exchange', async () => {
    const conn = await amqp.connect(AMQP_URL);
    const ch = await conn.createChannel();
    const exchange = `estuary-harness-${process.pid}`;
    await ch.assertExchange(exchange, 'topic', { autoDelete: true });
    const q = await ch.assertQueue('', { exclusive: true, autoDelete: true });
    await ch.bindQueue(q.queue, exchange, '#');
    const got = new Promise<string>((resolve) => {
      ch.consume(q.queue, (m) => m && resolve(m.content.toString()), { noAck: true });
    });
    ch.publish(exchange, 'info', Buffer.from('ping'));
    expect(await got).toBe('ping');
    await ch.deleteExchange(exchange);
    await conn.close();
  });
});

describe('child processes', () => {
  it('are stopped by PID and report their exit', async () => {
    const child = startChild(process.execPath, ['-e', 'console.log("ready"); setInterval(() => {}, 1000)']);
    await child.waitFor(/ready/);
    expect(await child.stop('SIGTERM')).not.toBe(0);
    expect(() => process.kill(child.pid, 0)).toThrow();
  });
  it('waitFor fails with the output when the process exits first', async () => {
    const child = startChild(process.execPath, ['-e', 'console.log("bye")']);
    await expect(child.waitFor(/never/)).rejects.toThrow(/exited before printing.*bye/s);
  });
});
