// The discovery page against the real thing: the command its empty page suggests, run as an
// operator runs it (placeholders filled in), registers a cache with a server that only takes
// signed heartbeats; and when that agent stops (SIGTERM: a goodbye), the cache stays listed as
// left instead of vanishing.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseHmacKey } from '../../lib/heartbeat-auth.ts';
import { NODE, startChild } from '../helpers/process.ts';
import { AMQP_URL, rabbitmqAvailable } from '../helpers/rabbitmq.ts';
import { tempDir } from '../helpers/tmp.ts';
import { eventually, startFakeCache, startTestDiscovery, uniqueExchange } from './net.ts';

const rabbit = await rabbitmqAvailable();
const BIN = new URL('../../bin/estuary.js', import.meta.url).pathname;
const SECRET = 'page-hint-shared-secret';

const unescape = (s: string) =>
  s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');

describe.runIf(rabbit.ok)('the discovery page, live', () => {
  it("suggests an agent command that registers, and shows the cache as left after the agent's goodbye", async () => {
    const exchange = uniqueExchange();
    const d = await startTestDiscovery({ exchange, keys: [parseHmacKey(SECRET)], shoalCompat: false });
    const empty = await (await fetch(`${d.url}/`)).text();
    const hint = unescape(/<code>(estuary agent [^<]*)<\/code>/.exec(empty)![1]!);
    const dir = await tempDir('estuary-hint-');
    const keyFile = join(dir, 'hmac.key');
    await writeFile(keyFile, `${SECRET}\n`, { mode: 0o600 });
    const cache = await startFakeCache();
    // What an operator fills in: the broker's account, the key file's place, the cache's port.
    const account = new URL(AMQP_URL);
    const cmd = hint
      .replace('USER:PASSWORD', `${account.username}:${account.password}`)
      .replace('@/etc/estuary/hmac.key', `@${keyFile}`)
      .replace('http://127.0.0.1:3128', cache.url);
    const args = cmd.split(' ').slice(1);
    expect(args).toContain('--hmac-key');
    const agent = startChild(NODE, [BIN, ...args, '--hostname', 'hinted.test', '--log-format', 'json']);
    await eventually(
      () => d.registry.size,
      (n) => n === 1,
      20_000,
    );
    const metrics = await (await fetch(`${d.url}/metrics`)).text();
    expect(metrics).toMatch(/^estuary_discovery_cache_states\{state="(healthy|pending|unchecked)"\} 1$/m);
    expect(metrics).toContain('estuary_discovery_cache_states{state="late"} 0');
    expect(await agent.stop('SIGTERM')).toBe(0);
    await eventually(
      () => d.registry.size,
      (n) => n === 0,
    );
    const page = await (await fetch(`${d.url}/`)).text();
    expect(page).toMatch(/<tr class="s-left"><td>← left<br><small>said goodbye \d+ s ago<\/small><\/td><td class="wrap">hinted\.test/);
    expect(page).toContain('<b>0</b> caches: 0 healthy, 0 late, 0 failing; 1 left lately');
  });
});
