// The discovery benchmark: 10,000 caches heartbeating over a real RabbitMQ into an
// `estuary discovery` process, measuring
//   - ingestion: signed heartbeats per second from publish to registry (all 10,000, repeated),
//   - nearest-cache latency at a steady 1,000 queries/s (open loop), p50 and p99,
//   - peak nearest-cache queries/s (closed loop, 32 connections),
// while the caches keep heartbeating in the background at their real rate (10,000 / 30 s).
// Target from the issue: 1,000 queries/s with p99 under 5 ms at 10,000 caches.
// No Shoal server can be installed here (Python 2-era web.py stack, no network), so it is listed
// as a skipped peer and the figures stand on their own. With a single peer there is nothing to
// interleave; the runner's check (bench/interleave.ts) would flag it the day a second one joins
// and is measured in a block.

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseHmacKey } from '../../lib/heartbeat-auth.ts';
import { DISCOVERY_METRICS } from '../../lib/metric-names.ts';
import { startProcess } from '../proc.ts';
import { SampleBook } from '../samples.ts';
import type { BenchContext, PeerStatus, Scenario, ScenarioResult } from '../scenario.ts';
import { closedLoop, openFirehose, openLoop, percentile } from './load.ts';

const BIN = new URL('../../bin/estuary.js', import.meta.url).pathname;
const CACHES = 10_000;
const TARGET_RATE = 1000;
/** Caches heartbeat every 30 s, so the background firehose sends CACHES/30 per second. */
const HEARTBEAT_INTERVAL_S = 30;
/** Two seconds of queries is ~2,000 rankings: enough for V8 to optimise the hot paths. */
const WARM_UP_S = 2;

async function accepted(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const m = new RegExp(`${DISCOVERY_METRICS.heartbeats}\\{result="accepted"\\} (\\d+)`).exec(text);
  return m ? Number(m[1]) : 0;
}

/**
 * CPU seconds the server process has used (user + system, from /proc/PID/stat at the usual
 * 100 ticks/s). Unlike latency it does not change when other work shares the machine, so it is
 * the figure to compare across runs on a busy host.
 */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export const discoveryScenario: Scenario = async (ctx: BenchContext): Promise<ScenarioResult> => {
  const amqpUrl = String(ctx.settings.amqp ?? process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672');
  const reps = Number(ctx.settings.runs) || (ctx.quick ? 1 : 3);
  const seconds = ctx.quick ? 3 : 10;
  const exchange = `estuary-bench-${randomBytes(4).toString('hex')}`;
  const keyText = randomBytes(16).toString('hex');
  const settings = {
    caches: CACHES,
    repetitions: reps,
    querySeconds: seconds,
    targetRate: TARGET_RATE,
    amqp: amqpUrl.replace(/\/\/[^@]*@/, '//'),
    exchange,
    signed: true,
    verification: false,
  };
  const peers: PeerStatus[] = [
    {
      peer: 'shoal',
      status: 'skipped',
      reason: 'Shoal server is not installable on this machine (no Python 2 web.py stack, no network)',
    },
  ];
  const notes: string[] = [];
  const book = new SampleBook(ctx);
  const add = (c: string, metric: Parameters<SampleBook['add']>[0]['metric'], value: number) =>
    book.add({ case: c, peer: 'estuary', metric, value });

  ctx.progress('discovery: starting estuary discovery');
  const child = startProcess(
    'estuary discovery',
    process.execPath,
    [
      BIN,
      'discovery',
      '--listen',
      '127.0.0.1:0',
      '--amqp',
      amqpUrl,
      '--exchange',
      exchange,
      '--no-verify',
      '--log-format',
      'json',
      '--log-level',
      'info',
    ],
    { env: { ...process.env, ESTUARY_DISCOVERY_HMAC_KEY: keyText } },
  );
  const firehose = await openFirehose(amqpUrl, `${exchange}`, parseHmacKey(keyText), 1).catch(
    (err: Error) => err,
  );
  try {
    if (firehose instanceof Error) throw new Error(`RabbitMQ at ${settings.amqp}: ${firehose.message}`);
    const base = (await child.waitFor(/"url":"(http:\/\/127\.0\.0\.1:\d+)"/, 30_000))[1]!;
    await child.waitFor(/consuming heartbeats/, 30_000);
    for (let r = 0; r < reps && !ctx.signal.aborted; r++) {
      ctx.progress(`discovery: ingest ${CACHES} heartbeats, run ${r + 1}/${reps}`);
      const before = await accepted(base);
      const cpu = cpuSeconds(child.pid);
      const t = performance.now();
      await firehose.publish(0, CACHES);
      await waitUntil(async () => (await accepted(base)) >= before + CACHES, 60_000, 'ingestion');
      add(`ingest ${CACHES} signed heartbeats`, 'heartbeatRate', CACHES / ((performance.now() - t) / 1000));
      add('server CPU per heartbeat', 'cpuPerHeartbeat', ((cpuSeconds(child.pid) - cpu) / CACHES) * 1e6);
    }
    // Background heartbeats at the real rate while queries run.
    let next = 0;
    const perTick = Math.ceil(CACHES / HEARTBEAT_INTERVAL_S / 10);
    const background = setInterval(() => {
      const from = next;
      next = (next + perTick) % CACHES;
      void firehose.publish(from, Math.min(CACHES, from + perTick)).catch(() => {});
    }, 100);
    try {
      const p99: number[] = [];
      const at = `nearest @${TARGET_RATE}/s, ${CACHES} caches`;
      // Warm-up, not recorded: the first queries run before the JIT has compiled the ranking.
      ctx.progress('discovery: warming up');
      await openLoop(base, TARGET_RATE, WARM_UP_S, ctx.signal);
      for (let r = 0; r < reps && !ctx.signal.aborted; r++) {
        ctx.progress(`discovery: ${TARGET_RATE} nearest queries/s for ${seconds} s, run ${r + 1}/${reps}`);
        const o = await openLoop(base, TARGET_RATE, seconds, ctx.signal);
        p99.push(percentile(o.latencies, 99));
        add(`${at}, p50`, 'latency', percentile(o.latencies, 50));
        add(`${at}, p99`, 'latency', p99.at(-1)!);
        add(`${at}, answered`, 'requestRate', (o.sent - o.errors) / o.seconds);
        if (o.errors > 0)
          notes.push(`run ${r + 1}: ${o.errors} of ${o.sent} queries failed at ${TARGET_RATE}/s`);
        ctx.progress(`discovery: peak nearest queries/s for ${seconds} s, run ${r + 1}/${reps}`);
        const cpu = cpuSeconds(child.pid);
        const c = await closedLoop(base, 32, seconds, ctx.signal);
        add(`nearest peak, ${CACHES} caches, 32 connections`, 'requestRate', (c.sent - c.errors) / c.seconds);
        // Includes the background heartbeats (333/s), a small share at a few µs each.
        add('server CPU per nearest query', 'cpuPerQuery', ((cpuSeconds(child.pid) - cpu) / Math.max(1, c.sent)) * 1e3);
      }
      const worstP99 = Math.max(...p99);
      notes.push(
        `target: ${TARGET_RATE} queries/s with p99 < 5 ms at ${CACHES} caches — ${worstP99 < 5 ? 'met' : 'NOT met'} (worst p99 ${worstP99.toFixed(2)} ms)`,
      );
    } finally {
      clearInterval(background);
    }
    peers.unshift({ peer: 'estuary', status: 'ok' });
  } catch (err) {
    peers.unshift({ peer: 'estuary', status: 'failed', reason: (err as Error).message.split('\n')[0] });
    ctx.log.warn({ output: child.output().slice(-3000) }, 'discovery failed');
  } finally {
    await child.stop('SIGTERM', 5000);
    if (!(firehose instanceof Error)) await firehose.close();
  }
  return {
    scenario: 'discovery',
    settings,
    peers,
    measurements: book.measurements(),
    method: [
      `Ingestion: ${CACHES} signed heartbeats published at once over RabbitMQ; the time runs until the server's own counter has accepted them all.`,
      `Latency: an open loop of ${TARGET_RATE} nearest-cache queries/s for ${seconds} s per run after ${WARM_UP_S} s of warm-up, while the caches keep heartbeating every ${HEARTBEAT_INTERVAL_S} s; p50 and p99 of each run.`,
      'Queries: half Shoal /nearestcvmfs/5, half /api/v1/caches?n=5, each from a random position. Peak: a closed loop of 32 connections.',
      'Server CPU is read from /proc (user + system) and does not grow when other work shares the machine; latency does. The load generator and the server share the machine.',
    ],
    notes,
  };
};
