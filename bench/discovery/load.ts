// Load generators for the discovery benchmark: a heartbeat firehose over AMQP and an open-loop
// query generator (requests start on a fixed schedule whatever the answers do, so a slow server
// cannot hide its slowness by slowing the client down), plus a closed-loop one for peak req/s.

import { connect } from 'amqplib';
import { Pool } from 'undici';
import { type HmacKey, sign } from '../../lib/heartbeat-auth.ts';
import { HEARTBEAT_EXTENSION_KEY, SHOAL_EXCHANGE_TYPE } from '../../lib/heartbeat.ts';
import { seeded } from '../../lib/seeded.ts';

export { seeded };

export function fakeHeartbeat(i: number, rnd: () => number): Buffer {
  return Buffer.from(
    JSON.stringify({
      uuid: `bench-${i}`,
      hostname: `cache${i}.bench.example.org`,
      cache_port: 3128,
      cache_type: 'squid',
      max_load: 122_070,
      upstream: i % 3 === 0 ? 'frontier' : 'both',
      timestamp: Date.now() / 1000,
      load: Math.round(rnd() * 50_000),
      public_ip: `100.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
      [HEARTBEAT_EXTENSION_KEY]: {
        version: 1,
        cacheKind: 'squid',
        lat: rnd() * 140 - 70,
        lon: rnd() * 360 - 180,
        intervalS: 30,
      },
    }),
  );
}

export interface Firehose {
  /** Publishes heartbeats for caches [from, to), waiting for the broker's confirms. */
  publish(from: number, to: number): Promise<void>;
  close(): Promise<void>;
}

export async function openFirehose(
  url: string,
  exchange: string,
  key: HmacKey,
  seed: number,
): Promise<Firehose> {
  const conn = await connect(url);
  const ch = await conn.createConfirmChannel();
  await ch.assertExchange(exchange, SHOAL_EXCHANGE_TYPE, { durable: false });
  return {
    async publish(from, to) {
      for (let i = from; i < to; i++) {
        const body = fakeHeartbeat(i, seeded(seed + i));
        const ok = ch.publish(exchange, 'info', body, {
          contentType: 'application/json',
          headers: sign(body, key),
        });
        if (!ok) await new Promise((r) => ch.once('drain', r));
      }
      await ch.waitForConfirms();
    },
    async close() {
      await ch.deleteExchange(exchange).catch(() => {});
      await conn.close().catch(() => {});
    },
  };
}

export interface QueryStats {
  readonly sent: number;
  readonly errors: number;
  readonly seconds: number;
  /** Latencies in ms, sorted ascending. */
  readonly latencies: Float64Array;
}

export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function queryPath(rnd: () => number): string {
  const lat = (rnd() * 140 - 70).toFixed(3);
  const lon = (rnd() * 360 - 180).toFixed(3);
  return rnd() < 0.5 ? `/nearestcvmfs/5?lat=${lat}&lon=${lon}` : `/api/v1/caches?n=5&lat=${lat}&lon=${lon}`;
}

async function one(pool: Pool, path: string): Promise<number> {
  const t = performance.now();
  const res = await pool.request({ method: 'GET', path });
  await res.body.text();
  if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
  return performance.now() - t;
}

/** `rate` queries per second for `seconds`, started on schedule in 1 ms ticks. */
export async function openLoop(
  base: string,
  rate: number,
  seconds: number,
  signal: AbortSignal,
): Promise<QueryStats> {
  const pool = new Pool(base, { connections: 16 });
  const rnd = seeded(42);
  const lat: number[] = [];
  let errors = 0;
  let sent = 0;
  const inflight: Promise<void>[] = [];
  const start = performance.now();
  const end = start + seconds * 1000;
  while (performance.now() < end && !signal.aborted) {
    const due = Math.floor(((performance.now() - start) / 1000) * rate);
    while (sent < due) {
      sent++;
      inflight.push(
        one(pool, queryPath(rnd)).then(
          (ms) => void lat.push(ms),
          () => void errors++,
        ),
      );
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(inflight);
  await pool.close();
  return {
    sent,
    errors,
    seconds: (performance.now() - start) / 1000,
    latencies: Float64Array.from(lat).sort(),
  };
}

/** As many queries as `concurrency` keep-alive connections carry, for `seconds`. */
export async function closedLoop(
  base: string,
  concurrency: number,
  seconds: number,
  signal: AbortSignal,
): Promise<QueryStats> {
  const pool = new Pool(base, { connections: concurrency });
  const rnd = seeded(7);
  const lat: number[] = [];
  let errors = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  const worker = async () => {
    while (performance.now() < end && !signal.aborted) {
      try {
        lat.push(await one(pool, queryPath(rnd)));
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  await pool.close();
  return {
    sent: lat.length + errors,
    errors,
    seconds: (performance.now() - start) / 1000,
    latencies: Float64Array.from(lat).sort(),
  };
}
