// A bug of ours must not stop the service. A real `estuary gateway` (one worker, the default) is
// made to crash on a chosen URL through the test-only hook ESTUARY_TEST_CRASH_ON: the crashing
// client gets a closed connection, the primary starts a new worker at once, a retry is answered,
// what was cached before is still a hit, /metrics counts the restart and the log names the
// request once. Crashing again and again ends the service with ESTUARY_GW_CRASH_LOOP, exit 2.

import { describe, expect, it } from 'vitest';
import { type Reply, send } from './helpers/client.ts';
import { startGatewayProcess } from './helpers/gateway.ts';
import { fixed, slow, startOrigin } from './helpers/origin.ts';

const CRASH_ON = '/crash-here';

/** Sends until the gateway answers (a restart refuses connections for about a second). */
async function retried(gateway: string, target: string, withinMs = 20_000): Promise<Reply> {
  const until = Date.now() + withinMs;
  for (;;) {
    try {
      const r = await send(gateway, target);
      if (r.complete) return r;
    } catch (err) {
      if (Date.now() > until) throw err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function countMatches(text: string, pattern: RegExp): number {
  return [...text.matchAll(pattern)].length;
}

describe('one worker under the supervisor', async () => {
  const origin = await startOrigin();
  const gw = await startGatewayProcess(['--allow-dest', '127.0.0.1'], { ESTUARY_TEST_CRASH_ON: CRASH_ON });
  const kept = Buffer.alloc(300_000, 7);
  origin.route('/kept', fixed(kept, { 'cache-control': 'max-age=600' }));
  // Slow, so the hook fires while the request is still being served.
  origin.route(CRASH_ON, slow(Buffer.alloc(64 * 1024, 1), 1024, 20));

  it('restarts a crashed worker: the crashing client is cut, a retry and the cache are served', async () => {
    const first = await send(gw.url, `${origin.url}/kept`);
    expect(first.body.equals(kept)).toBe(true);

    const crashed = await send(gw.url, `${origin.url}${CRASH_ON}?n=1`).catch(() => undefined);
    expect(crashed?.complete ?? false).toBe(false);
    await gw.child.waitFor(/starting a new one/, 10_000);

    const after = await retried(gw.url, `${origin.url}/kept`);
    expect(after.body.equals(kept)).toBe(true);
    expect(String(after.headers['cache-status'])).toMatch(/hit.*detail=disk/);
    expect(origin.count('/kept')).toBe(1);

    const metrics = (await retried(gw.url, '/metrics')).body.toString();
    expect(metrics).toMatch(/^estuary_gateway_worker_restarts_total 1$/m);
    // Logged once, with the request that was being served.
    const out = gw.child.output();
    expect(countMatches(out, /gateway worker crashed/g)).toBe(1);
    expect(out).toMatch(new RegExp(`"request":"GET ${origin.url}${CRASH_ON}\\?n=1"`));
  });

  it('gives up after a crash loop with ESTUARY_GW_CRASH_LOOP and exit status 2', async () => {
    for (let n = 2; n < 12 && gw.child.proc.exitCode === null; n++) {
      await retried(gw.url, `${origin.url}${CRASH_ON}?n=${n}`, 5000).catch(() => undefined);
      await gw.child.waitFor(new RegExp(`${CRASH_ON.replace('/', '\\/')}\\?n=${n}`), 10_000).catch(() => undefined);
    }
    expect(await gw.child.exited).toBe(2);
    expect(gw.child.output()).toMatch(/estuary: gateway workers died 5 times within 60 s; stopped restarting them/);
  });
});
