// Attack: the start-up refusal of two --s3 names for one store bucket, now with the stores' host
// names resolved (gateway/s3/setup.ts refuseSharedStoreBuckets, 2 s at most). Inside a network
// namespace made here, with its own /etc/hosts (aliases of 127.0.0.1 and ::1) and a resolv.conf
// pointing at a loopback UDP port that swallows every query (a resolver that hangs).
//
// docs/STAGING.md: two served names for one store bucket are refused at start-up (exit 2),
// "however the store's URL is spelt (a host name and its address, a trailing dot: host names are
// resolved at start-up, for 2 s at most)".
// Expected: every pair that reaches one store bucket exits 2 with one line; a hanging resolver
// delays start-up by about 2 s, not by the resolver's own timeouts.
// (Found so: the IPv4-mapped IPv6 spelling of the same address, `[::ffff:127.0.0.1]`, which a
// connect reaches as 127.0.0.1, was not refused, and the gateway served both names.)

import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);

const BIN = join(import.meta.dirname, '..', '..', '..', 'bin', 'estuary.js');
const NS = `atkm10-${process.pid}`;
const ETC = `/etc/netns/${NS}`;
let dir = '';

beforeAll(async () => {
  dir = await tempDir('estuary-atk-map10-');
  writeFileSync(join(dir, 'keys.json'), JSON.stringify({ default: { accessKeyId: 'K', secretAccessKey: 'S', region: 'us-east-1' } }), { mode: 0o600 });
  writeFileSync(join(dir, 'issuer.key'), 'k'.repeat(64), { mode: 0o600 });
  mkdirSync(ETC, { recursive: true });
  onTeardown(() => rmSync(ETC, { recursive: true, force: true }));
  writeFileSync(join(ETC, 'hosts'), '127.0.0.1 localhost\n127.0.0.1 store-alias store-alias2\n::1 store6\n');
  writeFileSync(join(ETC, 'resolv.conf'), 'nameserver 127.0.0.53\noptions timeout:5 attempts:2\n');
  execFileSync('ip', ['netns', 'add', NS]);
  onTeardown(() => void execFileSync('ip', ['netns', 'del', NS]));
  execFileSync('ip', ['netns', 'exec', NS, 'ip', 'link', 'set', 'lo', 'up']);
  // The resolver that hangs: a UDP port that reads every query and never answers.
  const bh = spawn('ip', ['netns', 'exec', NS, NODE, '-e', "const d=require('dgram').createSocket('udp4');d.on('message',()=>{});d.bind(53,'127.0.0.53',()=>console.log('bound'))"], { stdio: ['ignore', 'pipe', 'inherit'] });
  onTeardown(() => void bh.kill('SIGKILL'));
  await new Promise<void>((r) => bh.stdout!.once('data', () => r()));
}, 30_000);

/** Starts a gateway in the namespace; 'listening', the exit code, or 'timeout', and the time taken. */
async function start(s3: string[], extra: string[] = []): Promise<{ got: number | null | 'listening' | 'timeout'; ms: number; out: string }> {
  const args = s3.flatMap((s) => ['--s3', s]);
  const t0 = Date.now();
  const c = startChild('ip', [
    'netns', 'exec', NS, NODE, BIN, 'gateway', '--listen', '127.0.0.1:0', '--cache-dir', join(dir, `c${t0}`), '--log-format', 'json',
    '--s3-credentials', join(dir, 'keys.json'), '--s3-issuer-key-file', join(dir, 'issuer.key'), ...args, ...extra,
  ]);
  const got = await Promise.race([c.exited, c.waitFor(/gateway listening/, 40_000).then(() => 'listening' as const, () => 'timeout' as const)]);
  const ms = Date.now() - t0;
  if (got === 'listening' || got === 'timeout') await c.stop();
  return { got, ms, out: c.output() };
}

describe('two --s3 names for one store bucket, host names resolved', () => {
  it('are refused with exit 2 for hosts-file aliases and every IPv6 spelling of one address', async () => {
    const pairs: [string, string][] = [
      ['http://[::ffff:127.0.0.1]:9000', 'http://127.0.0.1:9000/kek-data'],
      ['http://[::ffff:7f00:1]:9000', 'http://localhost:9000/kek-data'],
      ['http://[0:0:0:0:0:ffff:127.0.0.1]:9000', 'http://store-alias:9000/kek-data'],
      // Held (regression rows): hosts-file aliases, IPv6 by name and number.
      ['http://store-alias:9000', 'http://127.0.0.1:9000/kek-data'],
      ['http://store-alias:9000', 'http://store-alias2.:9000/kek-data'],
      ['http://store6:9000', 'http://[::1]:9000/kek-data'],
      ['http://STORE-ALIAS:9000', 'http://localhost:9000/kek-data'],
    ];
    const bad: string[] = [];
    for (const [a, b] of pairs) {
      const r = await start([`kek-data=${a}`, `alias=${b}`]);
      if (r.got !== 2) bad.push(`kek-data=${a} and alias=${b}: ${r.got === 'listening' ? 'started serving' : `exit ${String(r.got)}`}`);
      else if (r.out.trim().split('\n').length !== 1) bad.push(`kek-data=${a} and alias=${b}: exit 2 but not one line: ${r.out}`);
    }
    expect(bad, bad.join('\n')).toEqual([]);
  }, 180_000);

  it('a resolver that hangs delays start-up by about 2 s, with --workers 1 and 2 and eight store names (held)', async () => {
    const base = await start(['bkt1=http://127.0.0.1:9001', 'bkt2=http://127.0.0.1:9002']);
    expect(base.got).toBe('listening');
    const bad: string[] = [];
    for (const workers of ['1', '2']) {
      const names = Array.from({ length: 8 }, (_, i) => `bkt${i + 1}=http://store${i + 1}.example:900${i + 1}`);
      const r = await start(names, ['--workers', workers]);
      if (r.got !== 'listening' || r.ms > base.ms + 4000) bad.push(`--workers ${workers}, 8 unresolvable names: ${String(r.got)} after ${r.ms} ms (baseline ${base.ms} ms)`);
      // A name that does not resolve is compared as written: the same unresolvable name twice is refused.
      const dup = await start(['kek-data=http://nowhere.example:9000', 'alias=http://nowhere.example:9000/kek-data'], ['--workers', workers]);
      if (dup.got !== 2 || dup.ms > base.ms + 4000) bad.push(`--workers ${workers}, one unresolvable name twice: ${String(dup.got)} after ${dup.ms} ms`);
    }
    expect(bad, bad.join('\n')).toEqual([]);
  }, 180_000);
});
