// What each proxy of the gateway scenario is given, as data and configuration text: the same
// worker count and the same cache sizes for all, each in the layout its own documentation asks
// for. Pure: the start-up code in peers.ts writes these texts to disk and runs the programs.
//
// Equal, as far as each design allows:
// - Processes: two that serve requests. estuary --workers 2 (plus a primary that serves none);
//   nginx worker_processes 2; Squid `workers 2` (SMP mode, plus its coordinator and one rock
//   disker); Varnish one child with its default two thread pools; the node:http reference two
//   node:cluster workers, as estuary's.
// - Memory cache: 256 MiB holding objects up to 128 MiB. Squid's cache_mem is one cache shared by
//   its workers (memory_cache_shared); estuary's is split between its workers. Varnish -s malloc,256M and no
//   disk tier; nginx has no memory tier of its own (bodies are files, served from the page cache;
//   its keys_zone holds keys only).
// - Disk cache: 4 GiB (estuary --disk-cache, nginx max_size, Squid's rock cache_dir).
// Squid in SMP mode needs an SMP-aware cache_dir, and rock is the only one: "Rock is currently
// the only SMP-aware cache_dir type" (squid-cache.org/Doc/config/cache_dir; Squid 5.7's
// cf.data.pre, "The rock store type": one disker kid per rock cache_dir). The memory cache is
// then shared by default ("memory_cache_shared": on with multiple workers), set here explicitly.

export const WORKERS = 2;
export const MEM_CACHE_MIB = 256;
export const MEM_OBJECT_MAX_MIB = 128;
export const DISK_CACHE_MIB = 4096;

export type ProxyMode = 'forward' | 'reverse';

/** What a report says of one peer: its mode, its processes, its memory and cache sizes. */
export interface PeerSetup {
  readonly mode: ProxyMode;
  readonly processes: string;
  readonly memory: string;
  readonly disk: string;
}

export function describeSetup(name: string, s: PeerSetup): string {
  return `${name}: ${s.mode} proxy; ${s.processes}; memory: ${s.memory}; disk: ${s.disk}`;
}

const ESTUARY_MEMORY = `--mem-cache ${MEM_CACHE_MIB}MiB split between the workers, objects up to --mem-object-max ${MEM_OBJECT_MAX_MIB}MiB`;
/**
 * The on-request variant's memory tier: each worker holds as much as the others' whole tier, so
 * the workers together hold twice the others' memory. Not a fair peer: it shows what one tier of
 * MEM_CACHE_MIB shared by the workers would serve from memory.
 */
export const WHOLE_TIER_PEER = 'estuary-reverse-whole-tier';
export const WHOLE_TIER_MEM_CACHE_MIB = MEM_CACHE_MIB * WORKERS;
/** nginx with the fixed send buffer estuary gives near clients: whose gain it is, the setting's or the server's. */
export const NGINX_SNDBUF_PEER = 'nginx-sndbuf';
export const NGINX_SNDBUF = '512k';
const ESTUARY_DISK = `--disk-cache ${DISK_CACHE_MIB / 1024}GiB, shared by the workers; hits on bodies up to 16 MiB written from the page cache (mapped), as nginx sends its files`;

export const SETUPS: Readonly<Record<string, PeerSetup>> = {
  estuary: {
    mode: 'forward',
    processes: `--workers ${WORKERS} (a primary that serves no requests + ${WORKERS} workers)`,
    memory: ESTUARY_MEMORY,
    disk: ESTUARY_DISK,
  },
  'estuary-reverse': {
    mode: 'reverse',
    processes: `--workers ${WORKERS} (a primary that serves no requests + ${WORKERS} workers), --upstream default=the origin, --send-buffer auto (the default; loopback clients are near: 512 KiB)`,
    memory: ESTUARY_MEMORY,
    disk: ESTUARY_DISK,
  },
  [WHOLE_TIER_PEER]: {
    mode: 'reverse',
    processes: `--workers ${WORKERS} (a primary that serves no requests + ${WORKERS} workers), --upstream default=the origin`,
    memory: `--mem-cache ${WHOLE_TIER_MEM_CACHE_MIB}MiB: ${MEM_CACHE_MIB} MiB in each worker, twice the others' memory (not a fair peer: what one ${MEM_CACHE_MIB} MiB tier shared by the workers would hold), objects up to --mem-object-max ${MEM_OBJECT_MAX_MIB}MiB`,
    disk: ESTUARY_DISK,
  },
  squid: {
    mode: 'forward',
    processes: `SMP: workers ${WORKERS} (master + coordinator + ${WORKERS} workers + 1 rock disker)`,
    memory: `cache_mem ${MEM_CACHE_MIB} MB shared by the workers (memory_cache_shared on), maximum_object_size_in_memory ${MEM_OBJECT_MAX_MIB} MB`,
    disk: `cache_dir rock ${DISK_CACHE_MIB} MB (the SMP-aware store), collapsed_forwarding on`,
  },
  nginx: {
    mode: 'reverse',
    processes: `worker_processes ${WORKERS} (+ master)`,
    memory: 'no memory tier of its own: bodies are files served from the page cache; keys_zone 32m holds keys only',
    disk: `proxy_cache_path max_size=${DISK_CACHE_MIB / 1024}g, proxy_cache_lock on, upstream keepalive`,
  },
  [NGINX_SNDBUF_PEER]: {
    mode: 'reverse',
    processes: `worker_processes ${WORKERS} (+ master), listen … sndbuf=${NGINX_SNDBUF} (the send buffer estuary's --send-buffer auto gives near clients; measured only when named)`,
    memory: 'no memory tier of its own: bodies are files served from the page cache; keys_zone 32m holds keys only',
    disk: `proxy_cache_path max_size=${DISK_CACHE_MIB / 1024}g, proxy_cache_lock on, upstream keepalive`,
  },
  varnish: {
    mode: 'reverse',
    processes: `manager + 1 child with thread_pools ${WORKERS} (the default)`,
    memory: `-s malloc,${MEM_CACHE_MIB}M`,
    disk: 'none (malloc storage only)',
  },
  'node-http': {
    mode: 'reverse',
    processes: `node:cluster primary + ${WORKERS} workers, as estuary's`,
    memory: 'every body built once per worker and answered from memory',
    disk: 'none: a reference, not a proxy',
  },
};

export interface SquidPaths {
  readonly port: number;
  readonly dir: string;
  readonly cacheDir: string;
}

export function squidConf(p: SquidPaths): string {
  return [
    // `workers` must come before cache_dir (Squid 5.7 cf.data.pre, cache_dir).
    `workers ${WORKERS}`,
    `http_port 127.0.0.1:${p.port}`,
    'acl localnet src 127.0.0.0/8',
    'http_access allow localnet',
    'http_access deny all',
    `cache_mem ${MEM_CACHE_MIB} MB`,
    'memory_cache_shared on',
    `maximum_object_size_in_memory ${MEM_OBJECT_MAX_MIB} MB`,
    'maximum_object_size 1 GB',
    `cache_dir rock ${p.cacheDir} ${DISK_CACHE_MIB}`,
    'collapsed_forwarding on',
    'minimum_expiry_time 0',
    'quick_abort_min 0 KB',
    'quick_abort_max 0 KB',
    'cache_effective_user proxy',
    `pid_filename ${p.dir}/squid.pid`,
    `cache_log ${p.dir}/cache.log`,
    'access_log none',
    'cache_store_log none',
    `coredump_dir ${p.dir}`,
    'shutdown_lifetime 1 seconds',
    'max_filedescriptors 16384',
    '',
  ].join('\n');
}

export interface NginxPaths {
  readonly port: number;
  readonly originPort: number;
  readonly dir: string;
  /** `listen … sndbuf=`: a fixed socket send buffer, as estuary's --send-buffer auto gives near clients. */
  readonly sndbuf?: string;
}

export function nginxConf(p: NginxPaths): string {
  const tmp = `${p.dir}/tmp`;
  return `user root;
worker_processes ${WORKERS};
daemon off;
pid ${p.dir}/nginx.pid;
error_log ${p.dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${tmp};
  proxy_temp_path ${tmp};
  fastcgi_temp_path ${tmp};
  uwsgi_temp_path ${tmp};
  scgi_temp_path ${tmp};
  proxy_cache_path ${p.dir}/cache levels=1:2 keys_zone=c:32m max_size=${DISK_CACHE_MIB / 1024}g inactive=1d use_temp_path=off;
  upstream origin { server 127.0.0.1:${p.originPort}; keepalive 64; }
  server {
    listen 127.0.0.1:${p.port} reuseport${p.sndbuf ? ` sndbuf=${p.sndbuf}` : ''};
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
`;
}

export function varnishArgs(port: number, vcl: string, instanceDir: string): string[] {
  return [
    '-F',
    '-a',
    `127.0.0.1:${port}`,
    '-f',
    vcl,
    '-s',
    `malloc,${MEM_CACHE_MIB}M`,
    '-n',
    instanceDir,
    '-p',
    `thread_pools=${WORKERS}`,
    '-p',
    'send_timeout=600',
  ];
}

export function varnishVcl(originPort: number): string {
  return `vcl 4.1;\nbackend default { .host = "127.0.0.1"; .port = "${originPort}"; }\n`;
}

/**
 * The flags the estuary peers share; the reverse ones add --upstream, the forward one --allow-dest.
 * `memCacheMib` is the whole memory tier, split between the workers.
 */
export function estuaryArgs(port: number, cacheDir: string, memCacheMib = MEM_CACHE_MIB): string[] {
  return [
    '--listen',
    `127.0.0.1:${port}`,
    '--cache-dir',
    cacheDir,
    '--mem-cache',
    `${memCacheMib}MiB`,
    '--mem-object-max',
    `${MEM_OBJECT_MAX_MIB}MiB`,
    '--disk-cache',
    `${DISK_CACHE_MIB / 1024}GiB`,
    '--log-level',
    'warn',
    '--workers',
    String(WORKERS),
  ];
}
