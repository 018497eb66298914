// The proxies measured side by side, each configured from a template with settings equivalent to
// the others (and to those behind the reference numbers in the project's notes): 256 MiB memory
// cache with objects up to 128 MiB in memory (Varnish: malloc 1 GiB, it has no disk tier),
// a 4 GiB disk cache, collapsed forwarding on. Squid and estuary run as forward proxies, nginx
// and Varnish as reverse proxies (they are not forward proxies), all on loopback.

import { chown, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type BenchChild, runCommand, startProcess } from '../proc.ts';

export interface RunningPeer {
  readonly name: string;
  readonly port: number;
  /** 'forward': requests carry absolute URIs; 'reverse': origin-form paths. */
  readonly mode: 'forward' | 'reverse';
  readonly version: string;
  stop(): Promise<void>;
}

export interface PeerSpec {
  readonly name: string;
  /** Command that must be on PATH, and the Debian package that provides it. */
  readonly command: string;
  readonly pkg?: string;
  start(dir: string, port: number, originPort: number): Promise<RunningPeer>;
}

async function versionOf(cmd: string, args: string[], re: RegExp): Promise<string> {
  const r = await runCommand(cmd, args, { timeoutMs: 5000 });
  return re.exec(r.output)?.[1] ?? 'unknown';
}

function stopper(child: BenchChild): () => Promise<void> {
  return async () => {
    await child.stop('SIGTERM', 5000);
  };
}

export async function waitPort(child: BenchChild, port: number, timeoutMs: number): Promise<void> {
  const { connect } = await import('node:net');
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!child.isRunning()) throw new Error(`exited: ${child.output().trim().split('\n').at(-1) ?? ''}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`did not listen on ${port} within ${timeoutMs} ms: ${child.output().slice(-300)}`);
}

const ESTUARY_BIN = new URL('../../bin/estuary.js', import.meta.url).pathname;

export const estuaryPeer: PeerSpec = {
  name: 'estuary',
  command: process.execPath,
  async start(dir, port) {
    const child = startProcess('estuary gateway', process.execPath, [
      ESTUARY_BIN,
      'gateway',
      '--listen',
      `127.0.0.1:${port}`,
      '--cache-dir',
      join(dir, 'cache'),
      '--allow-dest',
      '127.0.0.1',
      '--mem-cache',
      '256MiB',
      '--mem-object-max',
      '128MiB',
      '--disk-cache',
      '4GiB',
      '--log-level',
      'warn',
      // Both cores, as nginx's two workers; one fill per object across them.
      '--workers',
      '2',
    ]);
    await waitPort(child, port, 30_000);
    const pkg = (await import('../../package.json', { with: { type: 'json' } })).default as {
      version: string;
    };
    return { name: 'estuary', port, mode: 'forward', version: pkg.version, stop: stopper(child) };
  },
};

export const squidPeer: PeerSpec = {
  name: 'squid',
  command: 'squid',
  pkg: 'squid',
  async start(dir, port) {
    await mkdir(join(dir, 'cache'), { recursive: true });
    const conf = join(dir, 'squid.conf');
    await writeFile(
      conf,
      [
        `http_port 127.0.0.1:${port}`,
        'acl localnet src 127.0.0.0/8',
        'http_access allow localnet',
        'http_access deny all',
        'cache_mem 256 MB',
        'maximum_object_size_in_memory 128 MB',
        'maximum_object_size 1 GB',
        `cache_dir ufs ${join(dir, 'cache')} 4096 16 256`,
        'collapsed_forwarding on',
        'minimum_expiry_time 0',
        'quick_abort_min 0 KB',
        'quick_abort_max 0 KB',
        'cache_effective_user proxy',
        `pid_filename ${join(dir, 'squid.pid')}`,
        `cache_log ${join(dir, 'cache.log')}`,
        'access_log none',
        'cache_store_log none',
        `coredump_dir ${dir}`,
        'shutdown_lifetime 1 seconds',
        'max_filedescriptors 16384',
        '',
      ].join('\n'),
    );
    await runCommand('chown', ['-R', 'proxy:proxy', dir]);
    await chown(dir, 13, 13).catch(() => undefined);
    const init = await runCommand('squid', ['-f', conf, '-z', '-N'], { timeoutMs: 60_000 });
    if (init.code !== 0) throw new Error(`squid -z failed: ${init.output.slice(-300)}`);
    const child = startProcess('squid', 'squid', ['-f', conf, '-N', '-d1']);
    await waitPort(child, port, 30_000);
    const version = await versionOf('squid', ['-v'], /Version (\S+)/);
    return { name: 'squid', port, mode: 'forward', version, stop: stopper(child) };
  },
};

export const nginxPeer: PeerSpec = {
  name: 'nginx',
  command: 'nginx',
  pkg: 'nginx',
  async start(dir, port, originPort) {
    await mkdir(join(dir, 'cache'), { recursive: true });
    await mkdir(join(dir, 'tmp'), { recursive: true });
    const conf = join(dir, 'nginx.conf');
    await writeFile(
      conf,
      `user root;
worker_processes 2;
daemon off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${join(dir, 'tmp')};
  proxy_temp_path ${join(dir, 'tmp')};
  fastcgi_temp_path ${join(dir, 'tmp')};
  uwsgi_temp_path ${join(dir, 'tmp')};
  scgi_temp_path ${join(dir, 'tmp')};
  proxy_cache_path ${join(dir, 'cache')} levels=1:2 keys_zone=c:256m max_size=4g inactive=1d use_temp_path=off;
  upstream origin { server 127.0.0.1:${originPort}; keepalive 64; }
  server {
    listen 127.0.0.1:${port} reuseport;
    location / {
      proxy_pass http://origin;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_cache c;
      proxy_cache_lock on;
      proxy_cache_lock_timeout 60s;
      proxy_cache_lock_age 60s;
      proxy_max_temp_file_size 0;
    }
  }
}
`,
    );
    const child = startProcess('nginx', 'nginx', ['-c', conf, '-p', dir]);
    await waitPort(child, port, 20_000);
    const version = await versionOf('nginx', ['-v'], /nginx\/(\S+)/);
    return { name: 'nginx', port, mode: 'reverse', version, stop: stopper(child) };
  },
};

export const varnishPeer: PeerSpec = {
  name: 'varnish',
  command: 'varnishd',
  pkg: 'varnish',
  async start(dir, port, originPort) {
    const vcl = join(dir, 'default.vcl');
    await writeFile(vcl, `vcl 4.1;\nbackend default { .host = "127.0.0.1"; .port = "${originPort}"; }\n`);
    const child = startProcess('varnish', 'varnishd', [
      '-F',
      '-a',
      `127.0.0.1:${port}`,
      '-f',
      vcl,
      '-s',
      'malloc,1G',
      '-n',
      join(dir, 'instance'),
      '-p',
      'send_timeout=600',
    ]);
    await waitPort(child, port, 30_000);
    const version = await versionOf('varnishd', ['-V'], /varnish-(\S+)/);
    return { name: 'varnish', port, mode: 'reverse', version, stop: stopper(child) };
  },
};

export const PEERS: readonly PeerSpec[] = [estuaryPeer, squidPeer, nginxPeer, varnishPeer];
