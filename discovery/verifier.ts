// Verification: before a cache is advertised, discovery fetches a known small file through it
// (Shoal uses a repository's .cvmfswhitelist) with a 2 s timeout. Unlike Shoal, which never
// re-tests a cache that failed once, every cache is tested again: a passing one every
// `recheckMs`, a failing one after a delay that doubles per failure up to `recheckMs`, so a cache
// that was merely starting up is advertised minutes later instead of never.

import type { Logger } from '../lib/log.ts';
import { proxyFetch } from '../lib/proxy-fetch.ts';
import { digestOf, ReferenceBody } from './reference-body.ts';
import { type CacheEntry, type Registry, verifyHost } from './registry.ts';

/** Test files are small; a cache's answer is compared on its first 256 KiB. */
const VERIFY_MAX_BYTES = 256 * 1024;

export interface VerifierOptions {
  readonly testUrl: string;
  readonly timeoutMs: number;
  readonly recheckMs: number;
  readonly retryBaseMs: number;
  /** Verifications in flight at once; each is one small GET. */
  readonly concurrency: number;
  readonly log: Logger;
  readonly onResult?: (e: CacheEntry, ok: boolean) => void;
}

export const DEFAULT_TEST_URL = 'http://cvmfs-stratum-one.cern.ch/cvmfs/cvmfs-config.cern.ch/.cvmfswhitelist';

/** When to test again after `failures` consecutive failures (0 = it passed). Pure. */
export function nextCheckDelay(failures: number, recheckMs: number, retryBaseMs: number): number {
  if (failures === 0) return recheckMs;
  return Math.min(recheckMs, retryBaseMs * 2 ** Math.min(failures - 1, 20));
}

export class Verifier {
  readonly #registry: Registry;
  readonly #o: VerifierOptions;
  readonly #inFlight = new Set<string>();
  readonly #stop = new AbortController();
  readonly #reference: ReferenceBody;
  #timer: NodeJS.Timeout | undefined;

  constructor(registry: Registry, options: VerifierOptions) {
    this.#registry = registry;
    this.#o = options;
    this.#reference = new ReferenceBody(options.testUrl, {
      timeoutMs: options.timeoutMs,
      maxBytes: VERIFY_MAX_BYTES,
      log: options.log,
    });
  }

  /** Checks for due caches every second. */
  start(): void {
    this.#timer = setInterval(() => this.kick(), 1000);
    this.#timer.unref();
  }

  /** Starts verifications that are due now, up to the concurrency limit. Scans the registry. */
  kick(nowMs = Date.now()): void {
    if (this.#stop.signal.aborted) return;
    for (const e of this.#registry.values()) {
      if (this.#inFlight.size >= this.#o.concurrency) return;
      this.consider(e, nowMs);
    }
  }

  /** Verifies one cache now if it is due and there is room; otherwise the next scan picks it up. */
  consider(e: CacheEntry, nowMs = Date.now()): void {
    const v = e.verification;
    if (this.#stop.signal.aborted || v.state === 'off' || v.nextAt > nowMs || this.#inFlight.has(e.id))
      return;
    if (this.#inFlight.size >= this.#o.concurrency) return;
    void this.#check(e);
  }

  async #check(e: CacheEntry): Promise<void> {
    this.#inFlight.add(e.id);
    const host = verifyHost(e);
    const proxy = `http://${host.includes(':') ? `[${host}]` : host}:${e.port}`;
    try {
      const r = await proxyFetch(proxy, this.#o.testUrl, {
        timeoutMs: this.#o.timeoutMs,
        maxBytes: VERIFY_MAX_BYTES,
        signal: this.#stop.signal,
      });
      const mismatch = r.ok && r.body.length > 0 ? await this.#differs(r.body) : undefined;
      if (this.#stop.signal.aborted) return;
      // The entry may have been replaced (new heartbeat from a moved cache) or expired meanwhile.
      const current = this.#registry.get(e.id);
      if (!current || current.verification !== e.verification) return;
      const v = current.verification;
      const now = Date.now();
      v.checkedAt = now;
      v.ms = r.ms;
      if (r.ok && r.body.length > 0 && !mismatch) {
        if (v.state !== 'ok')
          this.#o.log.info({ cache: e.hostname, id: e.id, ms: Math.round(r.ms) }, 'cache verified');
        v.state = 'ok';
        v.failures = 0;
        v.error = undefined;
      } else {
        v.state = 'failed';
        v.failures += 1;
        v.error = mismatch ?? (r.error || 'empty body');
        this.#o.log.warn(
          { cache: e.hostname, id: e.id, proxy, error: v.error, failures: v.failures },
          'cache failed verification',
        );
      }
      v.nextAt = now + nextCheckDelay(v.failures, this.#o.recheckMs, this.#o.retryBaseMs);
      this.#o.onResult?.(current, v.state === 'ok');
    } catch (err) {
      // A bug here must cost one check, not the process (this runs detached from any caller).
      this.#o.log.error({ err, id: e.id, proxy }, 'verification failed unexpectedly');
    } finally {
      this.#inFlight.delete(e.id);
    }
  }

  /** Why the body is not the test file, when discovery could fetch the file directly to compare. */
  async #differs(body: Buffer): Promise<string | undefined> {
    const expected = await this.#reference.digests();
    if (!expected || expected.includes(digestOf(body))) return undefined;
    return `the answer (${body.length} bytes) is not the test file as fetched directly from its origin`;
  }

  stop(): void {
    this.#stop.abort();
    if (this.#timer) clearInterval(this.#timer);
  }
}
