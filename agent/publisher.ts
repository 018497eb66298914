// The agent's AMQP connection: a confirm channel, so "published" means the broker took it, and a
// background loop that reconnects with backoff while the broker is away. A heartbeat that cannot
// be published is not queued: the next interval's is fresher, and a stale one would only mislead.
// A broker that refuses the agent's login is told apart from one that cannot be reached
// (lib/amqp-refusal.ts): the agent's start-up ends on it, and later it is logged as what it is.

import { type ChannelModel, type ConfirmChannel, connect } from 'amqplib';
import { ensureExchange } from '../lib/amqp-exchange.ts';
import {
  AMQP_HANDSHAKE_TIMEOUT_MS,
  type AmqpRefusal,
  amqpRefusal,
  brokerParts,
  handshakeFailure,
  refusalMessage,
} from '../lib/amqp-refusal.ts';
import { backoffDelay, sleep } from '../lib/backoff.ts';
import type { Logger } from '../lib/log.ts';
import { AMQP_AUTH_CODE } from './errors.ts';

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
  /** The first attempt's refusal, or undefined once it connected or failed for another reason. */
  readonly firstAnswer: Promise<AmqpRefusal | undefined>;
  /** Set while the broker refuses the agent (until a connection succeeds). */
  refusal(): AmqpRefusal | undefined;
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
  let refused: AmqpRefusal | undefined;
  let hasAnswered = false;
  let answered: (r: AmqpRefusal | undefined) => void = () => {};
  const firstAnswer = new Promise<AmqpRefusal | undefined>((r) => {
    answered = r;
  });

  const backoff = { baseMs: o.reconnectBaseMs ?? 500, maxMs: o.reconnectMaxMs ?? 30_000 };
  /** Publishes refused in a row; a confirmed one resets it. */
  let refusedPublishes = 0;
  const loop = async () => {
    let attempt = 0;
    while (!stopping.signal.aborted) {
      try {
        conn = await connect(o.url, { timeout: AMQP_HANDSHAKE_TIMEOUT_MS });
        await ensureExchange(conn, o.exchange);
        channel = await conn.createConfirmChannel();
      } catch (err) {
        await conn?.close().catch(() => {});
        conn = undefined;
        refused = amqpRefusal(err);
        const first = !hasAnswered;
        hasAnswered = true;
        answered(refused);
        const delay = backoffDelay(attempt++, backoff);
        // The first attempt's refusal is startAgent's to report (it ends the agent); later ones are logged.
        if (refused && !first)
          o.log.error({ code: AMQP_AUTH_CODE, retryInMs: delay }, `${refusalMessage(refused, o.url)}; retrying`);
        else if (!refused) o.log.warn({ broker: brokerParts(o.url).where, err: handshakeFailure(err), retryInMs: delay }, 'cannot reach the AMQP broker');
        await sleep(delay, stopping.signal);
        continue;
      }
      refused = undefined;
      hasAnswered = true;
      answered(undefined);
      attempt = 0;
      o.log.info({ exchange: o.exchange }, 'connected to the AMQP broker');
      const closed = new Promise<void>((resolve) => {
        conn!.once('close', () => resolve());
        conn!.on('error', (err: Error) => o.log.warn({ err: err.message }, 'AMQP connection error'));
        // A publish the user may not make (403 on the exchange) closes the channel, not the
        // connection: without a channel there is nothing to heartbeat on, so start over.
        channel!.once('close', () => resolve());
        channel!.on('error', (err: Error) => {
          refused = amqpRefusal(err);
          if (refused) o.log.error({ code: AMQP_AUTH_CODE }, `${refusalMessage(refused, o.url)}; retrying`);
          else o.log.warn({ err: err.message }, 'AMQP channel error');
        });
      });
      o.onConnected?.();
      await Promise.race([
        closed,
        new Promise((r) => stopping.signal.addEventListener('abort', r, { once: true })),
      ]);
      channel = undefined;
      if (stopping.signal.aborted) break;
      await conn?.close().catch(() => {});
      if (!refused) o.log.warn('lost the AMQP broker; reconnecting');
      // Connecting works but publishing is refused: back off as for a refused login.
      else await sleep(backoffDelay(refusedPublishes++, backoff), stopping.signal);
    }
  };
  const running = loop();

  return {
    isConnected: () => channel !== undefined,
    firstAnswer,
    refusal: () => refused,
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
            (err) => {
              if (!err) refusedPublishes = 0;
              resolve(!err);
            },
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
