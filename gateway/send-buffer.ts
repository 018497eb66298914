// The send buffer of client connections (--send-buffer). Linux grows a TCP socket's send buffer
// up to net.ipv4.tcp_wmem's maximum (4 MiB by default) for as long as the sender keeps it full,
// which is what a body of many MiB does. On a path whose round trip is short that depth buys no
// throughput (the bandwidth-delay product of 10 Gbit/s over 0.2 ms is 250 KB), yet each answer
// then has MiBs in the kernel at once, copied in and out long after they left the CPU's caches.
// So on near connections (round trip under 1 ms at accept: the same rack, site or cloud zone) a
// smaller fixed buffer is asked for; far ones keep the kernel's autotuning, which a long round
// trip needs. docs/CACHING.md, "Send buffers", has the measurements.

import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { formatSize } from '../lib/config/values.ts';
import { roundTripUs, setSendBuffer } from '../lib/socket-options.ts';

export type SendBufferSetting = 'auto' | 'off' | number;

/** What `auto` asks for on a near connection (the kernel doubles it for its bookkeeping). */
export const NEAR_SEND_BUFFER = 512 * 1024;
/** A connection whose round trip at accept is under this is near. */
export const NEAR_RTT_US = 1000;

/** The send buffer to ask for, or undefined for the kernel's own autotuning. */
export function sendBufferFor(setting: SendBufferSetting, rttUs: number | undefined): number | undefined {
  if (setting === 'off') return undefined;
  if (setting !== 'auto') return setting;
  // 0 is no sample (a handshake whose SYN-ACK was sent again, without TCP timestamps): unknown.
  return rttUs !== undefined && rttUs > 0 && rttUs < NEAR_RTT_US ? NEAR_SEND_BUFFER : undefined;
}

/** Applies --send-buffer to a connection just accepted. */
export function applySendBuffer(socket: Socket, setting: SendBufferSetting): void {
  const bytes = sendBufferFor(setting, setting === 'auto' ? roundTripUs(socket) : undefined);
  if (bytes !== undefined) setSendBuffer(socket, bytes);
}

/** The kernel's cap on a socket's asked-for send buffer (net.core.wmem_max), or undefined. */
export function readWmemMax(path = '/proc/sys/net/core/wmem_max'): number | undefined {
  try {
    const n = Number(readFileSync(path, 'utf8').trim());
    return Number.isSafeInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** A line for the start-up log when the kernel gives less than --send-buffer asks for, or undefined. */
export function cappedSendBuffer(setting: SendBufferSetting, wmemMax: number | undefined): string | undefined {
  if (setting === 'off' || wmemMax === undefined) return undefined;
  const asked = setting === 'auto' ? NEAR_SEND_BUFFER : setting;
  if (asked <= wmemMax) return undefined;
  const which = setting === 'auto' ? 'near connections' : 'connections';
  return (
    `--send-buffer asks for ${formatSize(asked)}, over net.core.wmem_max (${formatSize(wmemMax)}): ${which} get ` +
    `${formatSize(wmemMax)}; raise it with sysctl -w net.core.wmem_max=${asked}`
  );
}
