// Declaring Shoal's exchange without quarrelling with whoever declared it first. Shoal agents of
// different ages declared it with different flags, and redeclaring an existing exchange with other
// flags closes the channel (PRECONDITION_FAILED); so we only check that it exists, and declare it
// (topic, not durable, as Shoal's agents do) only when it does not.

import type { Channel, ChannelModel } from 'amqplib';
import { SHOAL_EXCHANGE_TYPE } from './heartbeat.ts';

export async function ensureExchange(conn: ChannelModel, exchange: string): Promise<void> {
  const probe = await conn.createChannel();
  probe.on('error', () => {
    // A failed check closes this channel with 404; that answer is handled below.
  });
  try {
    await probe.checkExchange(exchange);
    await probe.close();
    return;
  } catch {
    // Not there (the channel is already closed by the broker): declare it on a fresh channel.
  }
  const ch: Channel = await conn.createChannel();
  ch.on('error', () => {
    // A refused declaration (403) rejects assertExchange below, which reports it; without a
    // listener the channel's 'error' event would throw instead.
  });
  await ch.assertExchange(exchange, SHOAL_EXCHANGE_TYPE, { durable: false, autoDelete: false });
  await ch.close();
}
