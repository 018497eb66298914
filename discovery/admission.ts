// Whether one AMQP message may touch the registry: size, signature, JSON, schema, sane clock,
// per-cache rate. Pure apart from the flood guard's memory; time is passed in. Every refusal is a
// value with a reason, which the consumer counts and logs: a bad message never throws.

import { type HmacKey, verify } from '../lib/heartbeat-auth.ts';
import {
  GOODBYE_ROUTING_KEY,
  isHostOrLinkLocal,
  HEARTBEAT_EXTENSION_KEY,
  type Heartbeat,
  MAX_HEARTBEAT_BYTES,
  parseHeartbeat,
} from '../lib/heartbeat.ts';

export const DROP_REASONS = [
  'oversized',
  'bad-json',
  'invalid',
  'unsigned',
  'unknown-key',
  'bad-signature',
  'site-mismatch',
  'absurd-time',
  'flood',
  'registry-full',
  'impersonation',
  'replay',
] as const;
export type DropReason = (typeof DROP_REASONS)[number];

/** Shoal flags a heartbeat more than 10 s away from the server clock as clock drift. */
export const CLOCK_DRIFT_S = 10;
/**
 * Where a message stands in a cache's sequence, for replay checks and goodbyes: its own timestamp,
 * unless that is further ahead of discovery's clock than drift allows; then the time discovery
 * received it. A VM booted with its clock an hour fast would otherwise leave a goodbye (or a
 * heartbeat) that outranks every correct heartbeat until the hour has passed.
 */
export function orderingTimestamp(timestamp: number, nowMs: number): number {
  const nowS = nowMs / 1000;
  return timestamp - nowS > CLOCK_DRIFT_S ? nowS : timestamp;
}

/** A day off is not drift but a broken or replayed message. */
export const ABSURD_SKEW_S = 86_400;

export interface AdmissionPolicy {
  readonly keys: ReadonlyMap<string, HmacKey>;
  /** Shoal compatibility: accept unsigned heartbeats (and mark their caches). */
  readonly allowUnsigned: boolean;
  readonly maxBytes?: number;
  /** Keep loopback and link-local cache addresses (single-host test setups only). */
  readonly allowHostAddresses?: boolean;
}

/**
 * The heartbeat without loopback or link-local addresses: they name the receiver's own host or
 * link, so advertising one would send every client to a port on its own machine (or a signed
 * agent could point clients at a service on discovery's host). The field is dropped rather than
 * the heartbeat, because a Shoal agent reports whatever its interfaces carry.
 */
export function withoutHostAddresses(h: Heartbeat): Heartbeat {
  const out: Heartbeat = { ...h };
  for (const k of ['public_ip', 'private_ip', 'external_ip'] as const) {
    const a = out[k];
    if (a !== undefined && isHostOrLinkLocal(a)) delete out[k];
  }
  return out;
}

export interface IncomingMessage {
  readonly body: Uint8Array;
  readonly headers?: Readonly<Record<string, unknown>>;
  readonly routingKey: string;
  /** The AMQP user id (checked by RabbitMQ when set) or app id the publisher gave, for logs. */
  readonly sender?: string;
}

export type Admission =
  | {
      readonly ok: true;
      readonly heartbeat: Heartbeat;
      readonly auth: 'signed' | 'unsigned';
      readonly keyId?: string;
      readonly goodbye: boolean;
      /** Agent clock minus server clock, seconds. */
      readonly skewS: number;
    }
  | { readonly ok: false; readonly reason: DropReason; readonly detail: string; readonly uuid?: string };

export function admit(msg: IncomingMessage, policy: AdmissionPolicy, nowMs: number): Admission {
  const max = policy.maxBytes ?? MAX_HEARTBEAT_BYTES;
  if (msg.body.length > max) {
    return { ok: false, reason: 'oversized', detail: `${msg.body.length} bytes, limit ${max}` };
  }
  const sig = verify(msg.body, msg.headers, policy.keys);
  if (sig.state === 'unsigned' && !policy.allowUnsigned) {
    return { ok: false, reason: 'unsigned', detail: 'no signature and Shoal compatibility is off' };
  }
  if (sig.state === 'unknown-key') return { ok: false, reason: 'unknown-key', detail: `key id ${sig.keyId}` };
  if (sig.state === 'bad-signature')
    return { ok: false, reason: 'bad-signature', detail: `key id ${sig.keyId}` };
  const parsed = parseHeartbeat(msg.body);
  if (!parsed.ok) return { ok: false, reason: parsed.reason, detail: parsed.detail };
  const hb = policy.allowHostAddresses ? parsed.heartbeat : withoutHostAddresses(parsed.heartbeat);
  // Shoal's server ignores a heartbeat with neither a public nor a private address; so does this,
  // after the host addresses are gone (else the host name, "localhost" say, would be the proxy).
  if (!hb.public_ip && !hb.private_ip && !hb.external_ip) {
    return {
      ok: false,
      reason: 'invalid',
      detail: 'no address a client could use (loopback and link-local ones are not advertised)',
      uuid: hb.uuid,
    };
  }
  const ext = hb[HEARTBEAT_EXTENSION_KEY];
  if (sig.state === 'signed' && sig.keyId !== 'shared' && ext?.site !== sig.keyId) {
    return {
      ok: false,
      reason: 'site-mismatch',
      detail: `signed with the key of site ${sig.keyId} but claims site ${ext?.site ?? '(none)'}`,
      uuid: hb.uuid,
    };
  }
  const skewS = hb.timestamp - nowMs / 1000;
  if (Math.abs(skewS) > ABSURD_SKEW_S) {
    return {
      ok: false,
      reason: 'absurd-time',
      detail: `timestamp ${hb.timestamp} is ${Math.round(skewS)} s off`,
      uuid: hb.uuid,
    };
  }
  return {
    ok: true,
    heartbeat: hb,
    auth: sig.state === 'signed' ? 'signed' : 'unsigned',
    ...(sig.state === 'signed' ? { keyId: sig.keyId } : {}),
    goodbye: msg.routingKey === GOODBYE_ROUTING_KEY || ext?.goodbye === true,
    skewS,
  };
}

/**
 * Per-cache token bucket. A well-behaved agent sends one heartbeat per interval (30 s); the burst
 * absorbs restarts and a goodbye, and anything faster than `perSecond` sustained is a flood.
 */
export class FloodGuard {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  readonly #burst: number;
  readonly #perSecond: number;

  constructor(burst = 10, perSecond = 1) {
    this.#burst = burst;
    this.#perSecond = perSecond;
  }

  allow(uuid: string, nowMs: number): boolean {
    const b = this.#buckets.get(uuid) ?? { tokens: this.#burst, at: nowMs };
    b.tokens = Math.min(this.#burst, b.tokens + ((nowMs - b.at) / 1000) * this.#perSecond);
    b.at = nowMs;
    this.#buckets.set(uuid, b);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  /** Forgets buckets that have refilled, so memory follows the active caches. */
  prune(nowMs: number): void {
    for (const [uuid, b] of this.#buckets) {
      if (b.tokens + ((nowMs - b.at) / 1000) * this.#perSecond >= this.#burst) this.#buckets.delete(uuid);
    }
  }

  get size(): number {
    return this.#buckets.size;
  }
}
