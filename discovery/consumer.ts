// The AMQP side of discovery: its own exclusive, auto-delete queue bound with `#` to the exchange,
// as Shoal's server does, so several discovery servers each see every heartbeat and give the same
// answers. Reconnects with backoff for as long as it runs; heartbeats missed while the broker was
// away simply arrive again on the agents' next interval. A broker that refuses discovery's login or
// permissions (lib/amqp-refusal.ts) is not "away": that is said as such in the log and on the page.

import { connect, type ChannelModel, type ConsumeMessage } from 'amqplib';
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
import type { IncomingMessage } from './admission.ts';
import { AMQP_AUTH_CODE } from './errors.ts';

export type BrokerState = 'connected' | 'disconnected' | 'refused';

export interface ConsumerOptions {
  readonly url: string;
  readonly exchange: string;
  readonly log: Logger;
  readonly onMessage: (msg: IncomingMessage) => void;
  readonly reconnectBaseMs?: number;
  readonly reconnectMaxMs?: number;
}

export interface Consumer {
  /** Resolves once the first subscription is in place (or never, while the broker is away). */
  readonly ready: Promise<void>;
  isConnected(): boolean;
  /** 'refused' while the broker refuses the login or the permissions (until a subscription works). */
  state(): BrokerState;
  /** What the broker refuses and what to check, while it does. */
  refusal(): string | undefined;
  /** The first attempt's refusal, or undefined once it subscribed or failed for another reason. */
  readonly firstAnswer: Promise<AmqpRefusal | undefined>;
  stop(): Promise<void>;
}

export function startConsumer(options: ConsumerOptions): Consumer {
  const { log } = options;
  const stopping = new AbortController();
  let conn: ChannelModel | undefined;
  let connected = false;
  let refused: AmqpRefusal | undefined;
  let hasAnswered = false;
  let answered: (r: AmqpRefusal | undefined) => void = () => {};
  const firstAnswer = new Promise<AmqpRefusal | undefined>((r) => {
    answered = r;
  });
  let markReady: () => void = () => {};
  const ready = new Promise<void>((r) => {
    markReady = r;
  });

  const subscribe = async (): Promise<ChannelModel> => {
    const c = await connect(options.url, { timeout: AMQP_HANDSHAKE_TIMEOUT_MS });
    // A broker that closes a channel (403 ACCESS_REFUSED on the queue, say) makes amqplib emit
    // 'error' on the channel and then on the connection; an emitter without a listener throws,
    // which would end discovery with amqplib's stack trace. Keep the broker's words instead.
    let brokerSaid: Error | undefined;
    c.on('error', (err: Error) => {
      brokerSaid ??= err;
    });
    try {
      await ensureExchange(c, options.exchange);
      const ch = await c.createChannel();
      ch.on('error', (err: Error) => {
        brokerSaid ??= err;
        if (connected) log.warn({ err: err.message }, 'AMQP channel closed by the broker');
      });
      const { queue } = await ch.assertQueue('', { exclusive: true, autoDelete: true, durable: false });
      await ch.bindQueue(queue, options.exchange, '#');
      await ch.consume(queue, (m: ConsumeMessage | null) => m && deliver(m), { noAck: true });
      return c;
    } catch (err) {
      await c.close().catch(() => {});
      // The RPC's own rejection may only say "channel ended"; the channel's error names the refusal.
      throw amqpRefusal(err) || !brokerSaid ? err : brokerSaid;
    }
  };

  const senderOf = (m: ConsumeMessage): string | undefined => {
    const v: unknown = m.properties.userId ?? m.properties.appId;
    return typeof v === 'string' ? v.slice(0, 128) : undefined;
  };
  const deliver = (m: ConsumeMessage) => {
    try {
      options.onMessage({
        body: m.content,
        headers: m.properties.headers ?? undefined,
        routingKey: m.fields.routingKey,
        sender: senderOf(m),
      });
    } catch (err) {
      // onMessage handles bad messages itself; this guards the connection against its bugs.
      log.error({ err }, 'heartbeat handler failed');
    }
  };

  const loop = async () => {
    let attempt = 0;
    while (!stopping.signal.aborted) {
      try {
        conn = await subscribe();
      } catch (err) {
        const delay = backoffDelay(attempt++, {
          baseMs: options.reconnectBaseMs ?? 500,
          maxMs: options.reconnectMaxMs ?? 30_000,
        });
        refused = amqpRefusal(err);
        const first = !hasAnswered;
        hasAnswered = true;
        answered(refused);
        // The first attempt's refusal is startDiscovery's to report (it ends discovery).
        if (refused && !first)
          log.error({ code: AMQP_AUTH_CODE, retryInMs: delay }, `${refusalMessage(refused, options.url)}; retrying`);
        else if (!refused)
          log.warn(
            { broker: brokerParts(options.url).where, err: handshakeFailure(err), retryInMs: delay },
            'cannot subscribe to the AMQP exchange',
          );
        await sleep(delay, stopping.signal);
        continue;
      }
      // stop() came while connecting: it found no connection to close, so close this one here.
      if (stopping.signal.aborted) {
        await conn.close().catch(() => {});
        break;
      }
      attempt = 0;
      refused = undefined;
      hasAnswered = true;
      answered(undefined);
      connected = true;
      log.info({ exchange: options.exchange }, 'consuming heartbeats');
      markReady();
      const closed = new Promise<void>((resolve) => {
        conn!.once('close', () => resolve());
        conn!.on('error', (err: Error) => log.warn({ err: err.message }, 'AMQP connection error'));
      });
      await Promise.race([
        closed,
        new Promise((r) => stopping.signal.addEventListener('abort', r, { once: true })),
      ]);
      connected = false;
      if (!stopping.signal.aborted) log.warn('AMQP connection lost; reconnecting');
    }
  };
  const running = loop();

  return {
    ready,
    isConnected: () => connected,
    state: () => (connected ? 'connected' : refused ? 'refused' : 'disconnected'),
    refusal: () => (refused ? refusalMessage(refused, options.url) : undefined),
    firstAnswer,
    async stop() {
      stopping.abort();
      await conn?.close().catch(() => {});
      await running;
    },
  };
}
