// RabbitMQ for integration tests: the broker at AMQP_URL (default the local guest account).

import { portOpen, required, type Availability } from './services.ts';

export const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

export async function rabbitmqAvailable(): Promise<Availability> {
  const u = new URL(AMQP_URL);
  const up = await portOpen(u.hostname, Number(u.port || 5672));
  return required(
    'RabbitMQ',
    up,
    `rabbitmq-server -detached (then wait for port ${u.port || 5672}), or set AMQP_URL`,
  );
}
