// The agent's AMQP connection: a confirm channel, so "published" means the broker took it, and a
// background loop that reconnects with backoff while the broker is away. A heartbeat that cannot
// be published is not queued: the next interval's is fresher, and a stale one would only mislead.

import { type ChannelModel, type ConfirmChannel, connect } from 'amqplib';
import { ensureExchange } from '../lib/amqp-exchange.ts';
import { backoffDelay, sleep } from '../lib/backoff.ts';
import type { Logger } from '../lib/log.ts';

export interface PublisherOptions {
  readonly url: string;
  readonly exchange: string;
  readonly log: Logger;
  /** Called after every (re)connection, so the agent can heartbeat at once. */
  readonly onConnected?: () => void;
  readonly reconnectBaseMs?: number;
  readonly reconnectMaxMs?: number;
}

export interface Publisher {
  isConnected(): boolean;
  /** Publishes and waits for the broker's confirm; false when not connected or refused. */
  publish(
    routingKey: string,
    body: Buffer,
    headers: Record<string, string>,
    timeoutMs?: number,
  ): Promise<boolean>;
  close(): Promise<void>;
}

export function startPublisher(o: PublisherOptions): Publisher {
  const stopping = new AbortController();
  let conn: ChannelModel | undefined;
  let channel: ConfirmChannel | undefined;

  const loop = async () => {
    let attempt = 0;
    while (!stopping.signal.aborted) {
      try {
        conn = await connect(o.url);
        await ensureExchange(conn, o.exchange);
        channel = await conn.createConfirmChannel();
      } catch (err) {
        await conn?.close().catch(() => {});
        conn = undefined;
        const delay = backoffDelay(attempt++, {
          baseMs: o.reconnectBaseMs ?? 500,
          maxMs: o.reconnectMaxMs ?? 30_000,
        });
        o.log.warn({ err: (err as Error).message, retryInMs: delay }, 'cannot reach the AMQP broker');
        await sleep(delay, stopping.signal);
        continue;
      }
      attempt = 0;
      o.log.info({ exchange: o.exchange }, 'connected to the AMQP broker');
      const closed = new Promise<void>((resolve) => {
        conn!.once('close', () => resolve());
        conn!.on('error', (err: Error) => o.log.warn({ err: err.message }, 'AMQP connection error'));
        channel!.on('error', (err: Error) => o.log.warn({ err: err.message }, 'AMQP channel error'));
      });
      o.onConnected?.();
      await Promise.race([
        closed,
        new Promise((r) => stopping.signal.addEventListener('abort', r, { once: true })),
      ]);
      channel = undefined;
      if (!stopping.signal.aborted) o.log.warn('lost the AMQP broker; reconnecting');
    }
  };
  const running = loop();

  return {
    isConnected: () => channel !== undefined,
    async publish(routingKey, body, headers, timeoutMs = 5000) {
      const ch = channel;
      if (!ch) return false;
      const confirmed = new Promise<boolean>((resolve) => {
        try {
          ch.publish(
            o.exchange,
            routingKey,
            body,
            { contentType: 'application/json', persistent: false, headers },
            (err) => resolve(!err),
          );
        } catch {
          resolve(false);
        }
      });
      const timeout = new Promise<boolean>((r) => setTimeout(() => r(false), timeoutMs).unref());
      return Promise.race([confirmed, timeout]);
    },
    async close() {
      stopping.abort();
      await conn?.close().catch(() => {});
      await running;
    },
  };
}
