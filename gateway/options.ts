// The gateway's option table: flags, ESTUARY_GATEWAY_* variables, config keys and --help all
// come from here. Defaults are the named constants below; `estuary gateway` with no flags starts
// a safe cache: loopback and private clients only, and no destination until the operator names one.

import { homedir } from 'node:os';
import { join } from 'node:path';
import { option, optional, type OptionTable } from '../lib/config/options.ts';
import {
  bool,
  cidr,
  duration,
  formatSize,
  hostPort,
  int,
  list,
  size,
  str,
  url,
  ValueError,
  type ValueType,
} from '../lib/config/values.ts';
import { DEFAULT_CLIENT_NETS, DEST_PRESETS } from './acl.ts';
import type { SendBufferSetting } from './send-buffer.ts';

/**
 * The default is written symbolically so --help and docs/CONFIGURATION.md read the same on every
 * machine; expandCacheDir() turns it into $XDG_CACHE_HOME/estuary/gateway, else
 * ~/.cache/estuary/gateway (the XDG base-directory rule).
 */
export const DEFAULT_CACHE_DIR = '~/.cache/estuary/gateway';

/** A bearer token shorter than this is refused as guessable, as the HMAC keys of heartbeats are. */
export const MIN_ADMIN_TOKEN_BYTES = 16;

function sendBufferValue(): ValueType<SendBufferSetting> {
  // Under 64 KiB a loopback connection (64 KiB packets) stalls: a 9 MiB answer took 5 s at 4 KiB.
  const bytes = size(64 * 1024, 64 * 2 ** 20);
  const expected = 'auto, off, or a size from 64KiB to 64MiB such as 256KiB';
  return {
    expected,
    placeholder: 'auto|off|SIZE',
    parse(raw) {
      const word = typeof raw === 'string' ? raw.trim() : raw;
      if (word === 'auto' || word === 'off') return word;
      try {
        return bytes.parse(raw);
      } catch {
        throw new ValueError(`expected ${expected}`);
      }
    },
    format: (v) => (typeof v === 'number' ? formatSize(v) : v),
  };
}

function adminTokenValue(): ValueType<string> {
  const base = str('TOKEN', `a token of at least ${MIN_ADMIN_TOKEN_BYTES} characters`);
  return {
    ...base,
    parse(raw) {
      const t = base.parse(raw);
      if (Buffer.byteLength(t) < MIN_ADMIN_TOKEN_BYTES) {
        throw new ValueError(
          `an admin token needs at least ${MIN_ADMIN_TOKEN_BYTES} characters (make one with: openssl rand -hex 16)`,
        );
      }
      return t;
    },
  };
}

export function expandCacheDir(dir: string, env: Record<string, string | undefined> = process.env): string {
  if (dir === DEFAULT_CACHE_DIR && env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, 'estuary', 'gateway');
  if (dir === '~' || dir.startsWith('~/')) return join(homedir(), dir.slice(1));
  return dir;
}

/** Squid's recommended cache_mem for CVMFS is 128 MB; twice that keeps more manifests and catalogs hot. */
export const DEFAULT_MEM_CACHE = 256 * 2 ** 20;
/** Objects up to 1 MiB live in memory too: manifests, small catalogs, conditions payloads. */
export const DEFAULT_MEM_OBJECT = 2 ** 20;
/** Sites run 50–100 GB; 10 GiB is a safe default on a laptop or a small cloud VM. */
export const DEFAULT_DISK_CACHE = 10 * 2 ** 30;
/** CVMFS chunks are 4–16 MiB, whole files can be large; Squid's 4 MB default is the classic trap. */
export const DEFAULT_MAX_OBJECT = 4 * 2 ** 30;
/** The CVMFS client's own proxy timeout. */
export const DEFAULT_CONNECT_TIMEOUT = 5_000;
/**
 * Client connections served at once, per worker. Each costs a file descriptor (two while it waits
 * on an upstream) and tens of KB; 10,000 keeps a worker within the usual hard limit of open files
 * (Node raises its soft limit to the hard one) with room for cache files and upstream pools.
 */
export const DEFAULT_MAX_CONNECTIONS = 10_000;

/** S3's own clients cache listings for about a minute; objects are checked by ETag as often. */
export const DEFAULT_S3_REVALIDATE = 60_000;
/**
 * Aligned block of a large S3 object that a range read fetches when the object is not cached.
 * 8 MiB (measured, docs/BENCHMARKING.md "Block size"): a cold small read costs one block's transfer,
 * doubling with the block, while sequential reads gain 25% from 4 to 8 MiB and only 6% beyond.
 */
export const DEFAULT_S3_BLOCK = 8 * 2 ** 20;

export interface S3BucketSpec {
  /** The bucket name clients use. */
  readonly name: string;
  /** scheme://host:port of the store. */
  readonly origin: string;
  /** The bucket's name at the store. */
  readonly bucket: string;
}

const S3_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export const s3Buckets = (): ValueType<S3BucketSpec[]> => ({
  expected: 'NAME=URL such as kek-data=http://s3.site:9000 or data=http://s3.site:9000/kek-data',
  placeholder: 'NAME=URL,...',
  parse(raw) {
    const parts = (Array.isArray(raw) ? raw.map(String) : [String(raw)]).flatMap((p) => p.split(','));
    return parts
      .map((p) => p.trim())
      .filter(Boolean)
      .map((p) => {
        const m = /^([^=]+)=(.+)$/.exec(p);
        if (!m || !S3_NAME.test(m[1]!)) throw new ValueError(`expected ${this.expected} (bucket names: a-z, 0-9, . and -)`);
        const u = new URL(url(['http:', 'https:']).parse(m[2]!));
        const bucket = u.pathname.replace(/^\/|\/$/g, '') || m[1]!;
        if (!S3_NAME.test(bucket)) throw new ValueError(`${bucket} is not a valid bucket name`);
        return { name: m[1]!, origin: u.origin, bucket };
      })
      .map((b, i, all) => {
        const earlier = all.slice(0, i).find((o) => o.name === b.name || (o.origin === b.origin && o.bucket === b.bucket));
        if (earlier?.name === b.name) throw new ValueError(`bucket ${b.name} is named twice; name each bucket once`);
        // Objects are cached under the name served: a write through one name would leave the
        // other name's copies of the same object served until they are revalidated.
        if (earlier) throw new ValueError(`${b.name} and ${earlier.name} both serve bucket ${b.bucket} of ${b.origin}; serve each store bucket under one name`);
        return b;
      });
  },
  format: (v) => v.map((b) => `${b.name}=${b.origin}/${b.bucket}`).join(','),
});

export interface UpstreamGroup {
  readonly name: string;
  readonly urls: readonly string[];
}

const URL_TYPE = url(['http:']);

/** NAME=URL,URL... ; repeat the flag (or list several groups) for several rings. */
export const upstreamGroups = (): ValueType<UpstreamGroup[]> => ({
  expected: 'NAME=URL[,URL...] such as cvmfs=http://s1a:8000,http://s1b:8000',
  placeholder: 'NAME=URL,URL,...',
  parse(raw) {
    const parts = (Array.isArray(raw) ? raw.map(String) : [String(raw)]).flatMap((p) => p.split(','));
    const groups: { name: string; urls: string[] }[] = [];
    for (const p of parts.map((s) => s.trim()).filter(Boolean)) {
      const m = /^([A-Za-z0-9._-]+)=(.+)$/.exec(p);
      if (m) groups.push({ name: m[1]!.toLowerCase(), urls: [URL_TYPE.parse(m[2]!)] });
      else if (groups.length > 0) groups.at(-1)!.urls.push(URL_TYPE.parse(p));
      else throw new ValueError(`expected ${this.expected}`);
    }
    return groups;
  },
  format: (v) => v.map((g) => `${g.name}=${g.urls.join(',')}`).join(','),
});

/** One --allow-dest entry, checked at start-up so a typo is an error, not a silently closed door. */
export const destEntry = (): ValueType<string> => ({
  expected: 'host, .domain, *.domain, host:port, an IP or CIDR, or a preset',
  placeholder: 'DEST',
  parse(raw) {
    const t = String(raw).trim().toLowerCase();
    if (t in DEST_PRESETS) return t;
    if (t.startsWith('@'))
      throw new ValueError(`unknown preset ${t}; presets: ${Object.keys(DEST_PRESETS).join(', ')}`);
    if (t.includes('/') || /^[0-9.]+$/.test(t) || t.includes('::')) return cidr().parse(t);
    if (!/^(\*\.|\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?(:\d{1,5})?$/.test(t) && t !== '*') {
      throw new ValueError(`expected ${this.expected}`);
    }
    return t;
  },
  format: (v) => v,
});

/** One response header field name for --targeted-cache-control, compared in lower case. */
export const fieldName = (): ValueType<string> => ({
  expected: 'a header field name such as CDN-Cache-Control',
  placeholder: 'FIELD',
  parse(raw) {
    const t = String(raw).trim().toLowerCase();
    if (!/^[!#$%&'*+\-.^_`|~0-9a-z]+$/.test(t)) throw new ValueError(`expected ${this.expected}`);
    if (t === 'cache-control') throw new ValueError('Cache-Control already applies when no targeted field does');
    return t;
  },
  format: (v) => v,
});

/** --targeted-cache-control: field names, or `none` (an empty value means "the default" everywhere). */
export const targetedFields = (): ValueType<string[]> => {
  const names = list(fieldName(), 'FIELD,...');
  return {
    expected: `${names.expected}, or none`,
    placeholder: 'FIELD,...|none',
    parse: (raw) => (String(raw).trim().toLowerCase() === 'none' ? [] : names.parse(raw)),
    format: (v) => (v.length === 0 ? 'none' : names.format(v)),
  };
};

/**
 * Targeted cache-control fields (RFC 9213), highest priority first: the site's own field, then
 * the one every CDN honours. An origin sends them only to speak to caches like this one.
 */
export const DEFAULT_TARGETED_FIELDS = ['estuary-cache-control', 'cdn-cache-control'];

export const gatewayOptions = {
  listen: option(hostPort(), { host: '0.0.0.0', port: 3128 }, 'address to serve proxy requests on', {
    short: 'l',
  }),
  cacheDir: option(
    str('DIR', 'a directory'),
    DEFAULT_CACHE_DIR,
    'where the disk cache lives (created if missing; the default honours $XDG_CACHE_HOME)',
  ),
  memCache: option(size(0), DEFAULT_MEM_CACHE, 'bytes of small objects kept in memory'),
  memObjectMax: option(size(0), DEFAULT_MEM_OBJECT, 'largest object also kept in memory'),
  // Every entry takes at least one 4 KiB block: a smaller bound would store nothing, silently.
  diskCache: option(size(4096), DEFAULT_DISK_CACHE, 'bytes kept on disk; least recently used objects go first'),
  maxObjectSize: option(size(1), DEFAULT_MAX_OBJECT, 'largest object stored; larger ones pass through'),
  allowDest: option(
    list(destEntry(), 'DEST,...'),
    [] as string[],
    'destinations clients may reach: host, .domain (with subdomains), host:port, CIDR, or @cvmfs (WLCG/OSG stratum 1s and Frontier) / @loopback; empty denies all',
  ),
  allowClient: option(list(cidr()), DEFAULT_CLIENT_NETS, 'client networks allowed to use the gateway'),
  maxConnections: option(
    int(1, 10_000_000),
    DEFAULT_MAX_CONNECTIONS,
    'client connections served at once per worker; more are answered 503 and closed',
  ),
  connectPorts: option(
    list(int(1, 65535, 'PORT')),
    [443],
    'ports CONNECT may tunnel to (destination must also be allowed)',
  ),
  upstream: option(
    upstreamGroups(),
    [] as UpstreamGroup[],
    'reverse mode: a named ring of upstream servers tried in order (repeat for several rings); origin-form requests go to the ring named by the Host header, else "default", else the first',
  ),
  peers: option(
    list(url(['http:'])),
    [] as string[],
    'gateways sharing one cache by consistent hashing (include this one)',
  ),
  peerSelf: optional(url(['http:']), "this gateway's own URL as written in --peers"),
  adminToken: optional(
    adminTokenValue(),
    'bearer token for /estuary/v1/admin (admin API off without it)',
    { secret: true },
  ),
  connectTimeout: option(duration(1, 600_000), DEFAULT_CONNECT_TIMEOUT, 'upstream connect timeout'),
  responseTimeout: option(
    duration(1, 3_600_000),
    30_000,
    'time an upstream may take to send response headers',
  ),
  idleTimeout: option(duration(1, 3_600_000), 30_000, 'time an upstream may pause while sending a body'),
  headersTimeout: option(
    duration(1000, 3_600_000),
    60_000,
    "time a client may take to send a request's headers (then 408 and the connection closed)",
  ),
  failoverBackoff: option(duration(0, 3_600_000), 30_000, 'how long a failed upstream server is tried last'),
  staleIfError: option(
    duration(0, 365 * 86_400_000),
    3_600_000,
    'how long past expiry a stored response may be served when every upstream fails',
  ),
  heuristicMax: option(
    duration(0, 365 * 86_400_000),
    86_400_000,
    'cap on heuristic freshness (responses with Last-Modified but no max-age/Expires)',
  ),
  targetedCacheControl: option(
    targetedFields(),
    DEFAULT_TARGETED_FIELDS,
    'response fields whose directives replace Cache-Control and Expires for this cache (RFC 9213), first valid one wins; none to use Cache-Control only',
  ),
  s3: option(
    s3Buckets(),
    [] as S3BucketSpec[],
    'serve these S3 buckets as a caching S3 endpoint: NAME=URL, the store at URL (http://host:port, or http://host:port/BUCKET when its name differs); needs --s3-issuer-key-file',
  ),
  s3Credentials: optional(
    str('FILE', 'a file'),
    "JSON file with the stores' keys: {\"NAME or default\": {\"accessKeyId\", \"secretAccessKey\", \"sessionToken\"?, \"region\"?}}; without it AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY",
  ),
  s3IssuerKeyFile: optional(
    str('FILE', 'a file'),
    'file holding the key (at least 32 characters) that signs the credentials this gateway issues and accepts',
  ),
  s3Revalidate: option(
    duration(0, 86_400_000),
    DEFAULT_S3_REVALIDATE,
    'how long a cached S3 object is served before its ETag is checked with the store',
  ),
  s3BlockSize: option(
    size(0),
    DEFAULT_S3_BLOCK,
    'a range read of an uncached S3 object larger than this fetches only the aligned blocks of this size that cover the range (0: fetch the whole object)',
  ),
  s3MaxSkew: option(duration(1000, 3_600_000), 15 * 60_000, "largest difference between a request's signing time and the gateway clock"),
  s3Region: option(str('REGION', 'a region name'), 'us-east-1', 'region used to sign requests to the stores'),
  accessLog: optional(
    str('FILE|-'),
    'write one line per request, in Squid\'s native access.log format, to FILE (appended) or to stdout with -',
  ),
  frontHits: option(
    bool(),
    true,
    "answer plain reads (GET or HEAD over HTTP/1.1 without conditions, ranges or credentials) of fresh objects held in memory as soon as their head arrives, before Node's HTTP server reads them; false sends every request through it",
  ),
  sendBuffer: option(
    sendBufferValue(),
    'auto' as SendBufferSetting,
    "send buffer of client connections: auto asks for 512KiB on connections whose round trip is under 1 ms and leaves the kernel's autotuning to the others; off leaves it to the kernel always; a SIZE asks for that on every connection",
  ),
  workers: option(
    int(1, 64, 'N'),
    1,
    'processes serving requests, under a supervisor that restarts one that dies; they share the port, the disk cache and each fill (memory cache is split between them)',
  ),
} satisfies OptionTable;
