// What the test file really holds, fetched directly from its origin, so that verification can
// tell a cache that returns the file from one that answers every request with a page of its own
// (a captive portal, a misconfigured or hostile cache). The last two digests are kept, since a
// cache may still serve the previous version of a file that just changed at the origin.
//
// A discovery host that cannot reach the origin directly (only through the caches) gets no
// reference; verification then falls back to "HTTP 200 with a body", and says so once in the log.

import { createHash } from 'node:crypto';
import type { Logger } from '../lib/log.ts';

/** How long a fetched reference is trusted before it is fetched again. */
const REFRESH_MS = 60_000;

export function digestOf(body: Uint8Array): string {
  return createHash('sha256').update(body).digest('hex');
}

export class ReferenceBody {
  readonly #url: string;
  readonly #timeoutMs: number;
  readonly #maxBytes: number;
  readonly #log: Logger;
  #digests: string[] = [];
  #fetchedAt = -Infinity;
  #pending: Promise<void> | undefined;
  #warned = false;

  constructor(url: string, o: { timeoutMs: number; maxBytes: number; log: Logger }) {
    this.#url = url;
    this.#timeoutMs = o.timeoutMs;
    this.#maxBytes = o.maxBytes;
    this.#log = o.log;
  }

  /** The accepted digests (of the body cut at maxBytes), or undefined when the origin cannot be reached. */
  async digests(nowMs = Date.now()): Promise<readonly string[] | undefined> {
    if (nowMs - this.#fetchedAt >= REFRESH_MS) {
      this.#pending ??= this.#refresh(nowMs).finally(() => {
        this.#pending = undefined;
      });
      await this.#pending;
    }
    return this.#digests.length > 0 ? this.#digests : undefined;
  }

  async #refresh(nowMs: number): Promise<void> {
    this.#fetchedAt = nowMs;
    try {
      const res = await fetch(this.#url, { signal: AbortSignal.timeout(this.#timeoutMs) });
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
      const body = await readCapped(res, this.#maxBytes);
      if (body.length === 0) throw new Error('empty body');
      const d = digestOf(body);
      if (this.#digests[0] !== d) this.#digests = [d, ...this.#digests].slice(0, 2);
      this.#warned = false;
    } catch (err) {
      if (!this.#warned)
        this.#log.warn(
          { testUrl: this.#url, err: (err as Error).message },
          'cannot fetch the test URL directly; verification accepts any HTTP 200 with a body until it can',
        );
      this.#warned = true;
    }
  }
}

/** The first maxBytes of the body (what proxyFetch keeps of a cache's answer, to compare alike). */
async function readCapped(res: Response, maxBytes: number): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    chunks.push(chunk);
    size += chunk.byteLength;
    if (size >= maxBytes) break;
  }
  return Buffer.concat(chunks).subarray(0, maxBytes);
}
