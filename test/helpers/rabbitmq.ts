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

export interface AmqpUser {
  readonly name: string;
  readonly password: string;
  /** AMQP_URL's broker, logged in as this user with `password` (default: the right one). */
  url(password?: string): string;
  setPassword(password: string): Promise<void>;
  /** Sets the user's configure, write and read permissions on `/` (regular expressions). */
  setPermissions(configure: string, write: string, read: string): Promise<void>;
  /** Closes every connection of the user, as a broker restart or an operator would. */
  closeConnections(): Promise<void>;
}

async function rabbitmqctl(...args: string[]): Promise<void> {
  const { execFile } = await import('node:child_process');
  await new Promise<void>((resolve, reject) =>
    execFile('rabbitmqctl', args, { timeout: 60_000 }, (err, _out, stderr) =>
      err ? reject(new Error(`rabbitmqctl ${args[0]}: ${stderr.trim() || err.message}`)) : resolve(),
    ),
  );
}

/** A RabbitMQ user of the test's own (all permissions on /), deleted after the test file. */
export async function tempAmqpUser(): Promise<AmqpUser> {
  const { randomBytes } = await import('node:crypto');
  const { onTeardown } = await import('./cleanup.ts');
  const name = `estuary-test-${randomBytes(4).toString('hex')}`;
  const password = randomBytes(9).toString('hex');
  await rabbitmqctl('add_user', name, password);
  onTeardown(() => rabbitmqctl('delete_user', name).catch(() => undefined));
  await rabbitmqctl('set_permissions', '-p', '/', name, '.*', '.*', '.*');
  const broker = new URL(AMQP_URL);
  return {
    name,
    password,
    url: (pw = password) => `amqp://${name}:${pw}@${broker.host}`,
    setPassword: (pw) => rabbitmqctl('change_password', name, pw),
    setPermissions: (c, w, r) => rabbitmqctl('set_permissions', '-p', '/', name, c, w, r),
    closeConnections: () => rabbitmqctl('close_all_user_connections', name, 'closed by a test'),
  };
}
