// What the control loop remembers of its DataSource between intervals: the last holdings answer
// (a failure keeps it), every input size looked up (once per URL), and which pre-warms were asked
// for (so a 40 GB prefetch is not asked again every ten seconds while it runs). The policy sees
// only the plain maps this hands to the snapshot.

import type { Logger } from '../lib/log.ts';
import type { DataSource, Holdings } from './data.ts';
import type { PendingJob } from './model.ts';

/** Sizes looked up in one interval at most: a burst of new URLs is spread over a few intervals. */
const SIZES_PER_INTERVAL = 64;
/** A pre-warm of the same input at the same site is asked again after this (it may have been evicted). */
const PREWARM_AGAIN_MS = 10 * 60_000;

export class DataCache {
  private readonly source: DataSource;
  private readonly log: Logger;
  /**
   * Inputs the coordinator may size and pre-warm: those inside an admin-declared storage
   * location. Any batch user writes the comment a job's inputs come from; without this, one
   * could make the coordinator HEAD, and the gateways fetch, any address they can reach.
   */
  private readonly allowed: (url: string) => boolean;
  holdings: ReadonlyMap<string, Holdings> = new Map();
  readonly sizes = new Map<string, number>();
  /** URLs whose size cannot be known (the source said so): not asked again. */
  private readonly unknown = new Set<string>();
  private readonly asked = new Map<string, number>();

  constructor(source: DataSource, log: Logger, allowed: (url: string) => boolean) {
    this.source = source;
    this.log = log;
    this.allowed = allowed;
  }

  /** Asks the source about the pending jobs' inputs; never throws. */
  async refresh(pending: readonly PendingJob[]): Promise<void> {
    const urls = [...new Set(pending.flatMap((j) => j.inputs.map((i) => i.url)))];
    if (urls.length === 0) return;
    try {
      this.holdings = await this.source.holdings(urls);
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'cannot read what the caches hold; placing with the last answer');
    }
    const unsized = [
      ...new Set(pending.flatMap((j) => j.inputs.filter((i) => i.bytes === undefined).map((i) => i.url))),
    ].filter((u) => this.allowed(u) && !this.sizes.has(u) && !this.unknown.has(u));
    await Promise.all(
      unsized.slice(0, SIZES_PER_INTERVAL).map(async (url) => {
        try {
          const size = await this.source.size(url);
          if (size === undefined) this.unknown.add(url);
          else this.sizes.set(url, size);
        } catch (err) {
          // Not remembered: the next interval asks again.
          this.log.warn({ url, err: (err as Error).message }, 'cannot look up the size of an input');
        }
      }),
    );
  }

  /**
   * Starts the pre-warms the policy asked for, without waiting: a prefetch may take longer than
   * an interval. Returns the URLs asked now, per site.
   */
  prewarm(bySite: ReadonlyMap<string, readonly string[]>, now: number): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const [site, urls] of bySite) {
      const fresh = urls.filter((u) => this.allowed(u) && now - (this.asked.get(`${site} ${u}`) ?? -Infinity) >= PREWARM_AGAIN_MS);
      if (fresh.length === 0) continue;
      for (const u of fresh) this.asked.set(`${site} ${u}`, now);
      out.set(site, fresh);
      this.log.info({ site, urls: fresh }, 'pre-warming the site cache');
      this.source.prewarm(site, fresh).catch((err: Error) => {
        for (const u of fresh) this.asked.delete(`${site} ${u}`);
        this.log.warn({ site, err: err.message }, 'pre-warm failed; asked again next interval');
      });
    }
    return out;
  }
}
