// The gateway scenario's peers are configured alike: two processes serving requests each and the
// same cache sizes. Squid runs in SMP mode with the cache layout SMP needs (a shared memory cache
// and a rock cache_dir), and it really starts with it: two workers, a disker and a coordinator,
// a second request answered from its cache, and nothing of it left on the machine once stopped.

import { chmod, mkdir, readdir, readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../bench/gateway/index.ts';
import { NGINX_SNDBUF_PEER, nginxConf, SETUPS, squidConf, varnishArgs, WHOLE_TIER_PEER, WORKERS } from '../../bench/gateway/peer-configs.ts';
import { startBenchOrigin } from '../../bench/gateway/origin.ts';
import {
  chosenPeers,
  estuaryReversePeer,
  estuaryWholeTierPeer,
  PEERS,
  squidPeer,
} from '../../bench/gateway/peers.ts';
import { onTeardown } from '../helpers/cleanup.ts';
import { required } from '../helpers/services.ts';
import { tempDir } from '../helpers/tmp.ts';
import { onPath } from './helpers.ts';

const squid = required('squid', onPath('squid'), 'apt-get install squid');

describe('peer configurations', () => {
  it('gives Squid two SMP workers, a shared memory cache and a rock cache_dir after them', () => {
    const lines = squidConf({ port: 3128, dir: '/d', cacheDir: '/d/cache' }).split('\n');
    expect(WORKERS).toBe(2);
    expect(lines).toContain('workers 2');
    expect(lines).toContain('memory_cache_shared on');
    expect(lines).toContain('cache_mem 256 MB');
    expect(lines).toContain('cache_dir rock /d/cache 4096');
    expect(lines.some((l) => /^cache_dir (ufs|aufs|diskd) /.test(l))).toBe(false);
    expect(lines.indexOf('workers 2')).toBeLessThan(lines.indexOf('cache_dir rock /d/cache 4096'));
  });

  it('gives nginx two workers and a 4 GiB cache, Varnish 256 MiB of malloc storage', () => {
    const conf = nginxConf({ port: 1, originPort: 2, dir: '/d' });
    expect(conf).toMatch(/^worker_processes 2;$/m);
    expect(conf).toMatch(/max_size=4g/);
    expect(varnishArgs(1, '/d/v.vcl', '/d/i').join(' ')).toMatch(/-s malloc,256M .*thread_pools=2/);
    expect(conf).toMatch(/^ {4}listen 127\.0\.0\.1:1 reuseport;$/m);
  });

  it('measures nginx with a fixed send buffer only when --peers names it', () => {
    const names = (wanted?: string[]) => chosenPeers(PEERS, wanted).map((s) => s.name);
    expect(names()).not.toContain(NGINX_SNDBUF_PEER);
    expect(names(['nginx', NGINX_SNDBUF_PEER])).toEqual(['nginx', NGINX_SNDBUF_PEER]);
    expect(nginxConf({ port: 1, originPort: 2, dir: '/d', sndbuf: '512k' })).toMatch(/^ {4}listen 127\.0\.0\.1:1 reuseport sndbuf=512k;$/m);
  });

  it('measures the whole-tier variant only when --peers names it', () => {
    const names = (wanted?: string[]) => chosenPeers(PEERS, wanted).map((s) => s.name);
    expect(names()).toEqual(['estuary', 'squid', 'estuary-reverse', 'nginx', 'varnish']);
    expect(names(['estuary-reverse', WHOLE_TIER_PEER])).toEqual(['estuary-reverse', WHOLE_TIER_PEER]);
    expect(SETUPS[WHOLE_TIER_PEER]!.memory).toMatch(/^--mem-cache 512MiB: 256 MiB in each worker, twice/);
  });

  it('starts the whole-tier variant with 256 MiB per worker and the others with 256 MiB in all', async () => {
    const dir = await tempDir('estuary-gw-whole-tier-');
    for (const [spec, mem] of [
      [estuaryWholeTierPeer, '512MiB'],
      [estuaryReversePeer, '256MiB'],
    ] as const) {
      await mkdir(join(dir, spec.name), { recursive: true });
      const running = await spec.start(join(dir, spec.name), await freePort(), 9);
      onTeardown(() => running.stop());
      const argv = (await readFile(`/proc/${running.pid}/cmdline`, 'utf8')).split('\0');
      expect(argv[argv.indexOf('--mem-cache') + 1], spec.name).toBe(mem);
      expect(argv[argv.indexOf('--workers') + 1]).toBe(String(WORKERS));
      await running.stop();
    }
  }, 60_000);
});

/** Processes whose command line names `conf`: the master and every kid it forked. */
async function processesWith(conf: string): Promise<string[]> {
  const out: string[] = [];
  for (const pid of (await readdir('/proc')).filter((d) => /^\d+$/.test(d))) {
    const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmd.includes(conf)) out.push(cmd.split('\0').join(' ').trim());
  }
  return out;
}

function xCache(port: number, target: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: target, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(String(res.headers['x-cache'] ?? '')));
    });
    req.on('error', reject);
    req.end();
  });
}

describe.runIf(squid.ok)('Squid in SMP mode', () => {
  it('starts two workers, a disker and a coordinator, caches, and leaves nothing behind', async () => {
    const dir = await tempDir('estuary-gw-squid-');
    // Squid's kids run as the proxy user, who must reach the cache directory inside this one.
    await chmod(dir, 0o711);
    const origin = await startBenchOrigin(4096, 65_536, true);
    onTeardown(() => origin.close());
    const port = await freePort();
    const peer = await squidPeer.start(dir, port, origin.port);
    onTeardown(() => peer.stop());
    const conf = `${dir}/squid.conf`;
    const procs = await processesWith(conf);
    // A kid forking a helper shows its command line for a moment twice: roles, not processes.
    const kids = [...new Set(procs.map((c) => /--kid (\S+)/.exec(c)?.[1]).filter(Boolean))].sort();
    expect(kids).toEqual(['squid-1', 'squid-2', 'squid-coord-4', 'squid-disk-3']);
    const service = /-n (\S+)/.exec(procs[0]!)![1]!;
    expect((await readdir('/dev/shm')).some((n) => n.startsWith(`${service}-cache_mem`))).toBe(true);
    const target = `http://127.0.0.1:${origin.port}/squid/small`;
    expect(await xCache(port, target)).toMatch(/^MISS/);
    // A worker stores a response in the shared cache after answering it, so the next request,
    // on either worker, may come a moment too soon; a few tries must find it there.
    const later: string[] = [];
    for (let i = 0; i < 20 && !later.some((x) => x.startsWith('HIT')); i++) {
      await new Promise((r) => setTimeout(r, 100));
      later.push(await xCache(port, target));
    }
    expect(later.at(-1)).toMatch(/^HIT/);
    await peer.stop();
    expect(await processesWith(conf)).toEqual([]);
    const left = [...(await readdir('/run/squid')), ...(await readdir('/dev/shm'))];
    expect(left.filter((n) => n.startsWith(`${service}-`))).toEqual([]);
  }, 60_000);
});
