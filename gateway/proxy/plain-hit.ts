// Answers for the front reader (gateway/front-reader.ts): a plain read (http/request-head.ts) of a
// fresh entry held in memory, as the bytes the full path would send, or nothing, and the full
// path answers it instead.
//
// "The bytes the full path would send" is the contract: the same head node:http writes for
// `writeHead(status, wholeHead(...))` and `end(body)` on a kept-alive HTTP/1.1 connection (the
// stored headers, Age, Cache-Status, Content-Length, then Date unless stored, then Connection and
// Keep-Alive), the same counters and the same access-log line. An entry whose stored headers
// node:http would treat specially (framing, connection, non-ASCII values) is left to node:http.

import { STATUS_CODES } from 'node:http';
import type { AccessLogger } from '../access-log.ts';
import { upstreamHostOf } from './access-record.ts';
import type { Cache } from '../cache/cache.ts';
import type { EntryMeta } from '../cache/entry.ts';
import { ageNow, usability } from '../cache/freshness.ts';
import { findVariant } from '../cache/variants.ts';
import { parseCacheControl } from '../http/cache-control.ts';
import type { PlainHeaders } from '../http/request-head.ts';
import type { Metrics } from '../metrics.ts';
import type { HashRing } from '../ring.ts';
import { hitStatus, wholeHead } from './heads.ts';
import { NAME } from './respond.ts';
import type { TargetCache } from './target.ts';

export interface PlainHitDeps {
  readonly cache: Cache;
  readonly metrics: Metrics;
  readonly heuristicMaxS: number;
  readonly peers?: { readonly ring: HashRing; readonly self: string };
  readonly accessLog?: AccessLogger;
}

/** A plain read, as the front reader saw it. */
export interface PlainRead {
  readonly method: 'GET' | 'HEAD';
  readonly target: string;
  readonly headers: PlainHeaders;
  readonly client: string | undefined;
}

/** Stored headers node:http gives meaning to when it writes them: such an entry takes the full path. */
const SPECIAL = new Set(['connection', 'keep-alive', 'transfer-encoding', 'expect', 'trailer', 'content-disposition', 'date']);
const PLAIN_VALUE = /^[\x20-\x7e\t]*$/;
/**
 * What was last built for an entry; reused while its head list, the Date line and the body held
 * are the same. The body is never copied: a copy per entry would be memory --mem-cache does not count.
 */
interface Built {
  readonly headers: readonly string[];
  readonly date: string;
  readonly body: Buffer;
  /** The answer to a HEAD, and to a GET of an empty body. */
  readonly headOnly: readonly Buffer[];
  /** The answer to a GET: head and body, written together. */
  readonly withBody: readonly Buffer[];
  readonly headLength: number;
}

interface EntryPlan {
  /** Whether node:http would write this entry's head as plain text (see SPECIAL). */
  readonly plain: boolean;
  /** Stored Date, if any: node:http then adds none. */
  readonly storedDate: boolean;
  contentType?: string;
}

const plans = new WeakMap<EntryMeta, EntryPlan>();

/**
 * Heads built, for the entries hit most recently: a bounded map, not a field of the entry, since
 * the disk index keeps every entry's metadata (and what hangs on it) long after it left memory.
 */
const built = new Map<EntryMeta, Built>();
const BUILT_MAX = 4096;

function remember(meta: EntryMeta, b: Built): void {
  built.delete(meta);
  built.set(meta, b);
  if (built.size > BUILT_MAX) built.delete(built.keys().next().value!);
}

function planOf(meta: EntryMeta): EntryPlan {
  let p = plans.get(meta);
  if (p) return p;
  let plain = meta.status >= 200 && meta.status !== 204 && meta.status !== 304 && STATUS_CODES[meta.status] !== undefined;
  let storedDate = false;
  for (const [name, value] of Object.entries(meta.headers)) {
    const values = Array.isArray(value) ? value : [value];
    if (name === 'date' && values.length === 1) storedDate = true;
    else if (SPECIAL.has(name)) plain = false;
    if (!values.every((v) => typeof v === 'string' && PLAIN_VALUE.test(v))) plain = false;
  }
  const type = meta.headers['content-type'];
  p = { plain, storedDate, contentType: typeof type === 'string' ? type : undefined };
  plans.set(meta, p);
  return p;
}

/** Node's Date line, rebuilt once a second. */
let dateSecond = -1;
let dateLine = '';
function currentDateLine(now: number): string {
  const s = Math.floor(now / 1000);
  if (s !== dateSecond) {
    dateSecond = s;
    dateLine = `Date: ${new Date(s * 1000).toUTCString()}\r\n`;
  }
  return dateLine;
}

/** The head node:http writes for `writeHead(status, headers)` on a kept-alive 1.1 connection. */
function serializeHead(status: number, headers: readonly string[], date: string, keepAliveS: number): string {
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n`;
  for (let i = 0; i < headers.length; i += 2) head += `${headers[i]}: ${headers[i + 1]}\r\n`;
  return `${head}${date}Connection: keep-alive\r\nKeep-Alive: timeout=${keepAliveS}\r\n\r\n`;
}

export class PlainHits {
  readonly #d: PlainHitDeps;
  readonly #targets: TargetCache;
  readonly #keepAliveS: number;

  constructor(deps: PlainHitDeps, targets: TargetCache, keepAliveMs: number) {
    this.#d = deps;
    this.#targets = targets;
    this.#keepAliveS = Math.floor(keepAliveMs / 1000);
  }

  /**
   * The answer's bytes (head, then body unless HEAD), with the request counted and logged; or
   * undefined, having done nothing, when the full path must answer (not held in memory, not
   * fresh, another peer's, a target it refuses, an entry with special headers).
   */
  answer(r: PlainRead): readonly Buffer[] | undefined {
    const d = this.#d;
    const resolved = this.#targets.resolve(r.target, r.headers.host);
    if (!resolved.ok) return undefined;
    const target = resolved.target;
    if (target.sign !== undefined) return undefined;
    const owner = d.peers?.ring.owner(target.key);
    if (owner && owner !== d.peers!.self) return undefined;
    if (d.cache.disk.indexRead() && !d.cache.lookup(target.key)) return undefined;
    const { key, found } = findVariant(d.cache, target.key, r.headers);
    if (found?.tier !== 'memory') return undefined;
    const meta = found.meta;
    const plan = planOf(meta);
    if (!plan.plain) return undefined;
    const now = Date.now();
    const u = usability(meta, parseCacheControl(undefined), now, d.heuristicMaxS);
    if (u.use !== 'fresh') return undefined;
    d.cache.touch(key);
    const cacheStatus = hitStatus(meta, NAME, u.ttl, 'memory', false);
    const headers = wholeHead(meta, ageNow(meta, now, d.heuristicMaxS), cacheStatus);
    const date = plan.storedDate ? '' : currentDateLine(now);
    let b = built.get(meta);
    if (b?.headers !== headers || b.date !== date || b.body !== found.body) {
      const head = Buffer.from(serializeHead(meta.status, headers, date, this.#keepAliveS), 'latin1');
      b = { headers, date, body: found.body, headOnly: [head], withBody: [head, found.body], headLength: head.length };
      remember(meta, b);
    }
    const withBody = r.method === 'GET' && found.body.length > 0;
    const out = withBody ? b.withBody : b.headOnly;
    d.metrics.memoryHit.inc();
    d.metrics.frontHit.inc();
    if (withBody) d.metrics.bytesOut.inc(found.body.length);
    d.metrics.request(r.method, meta.status);
    d.accessLog?.({
      endMs: now,
      elapsedMs: 0,
      client: r.client,
      status: meta.status,
      bytes: b.headLength + (withBody ? found.body.length : 0),
      method: r.method,
      url: r.target,
      cacheStatus,
      upstreamHost: upstreamHostOf(r.target, r.headers.host),
      contentType: plan.contentType,
    });
    return out;
  }
}
