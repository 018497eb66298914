// Prefetch for the admin API (and the coordinator's pre-warming): a list of HTTP URLs, reverse-mode
// paths and s3:// keys or prefixes is brought into the cache ahead of use, a few at a time, each
// through the same fills (one upstream fetch per object, even with clients asking meanwhile).

import type { DestAcl } from './acl.ts';
import type { ProxyHandler } from './proxy/handler.ts';
import { type Ring, resolveTarget, type Target } from './proxy/target.ts';
import type { S3Endpoint } from './s3/endpoint.ts';

/** Objects fetched at once: enough to fill a link, few enough not to crowd out clients. */
const PARALLEL = 4;
/** Items (URLs or prefixes) one request may name. */
export const MAX_PREFETCH_ITEMS = 10_000;

export interface PrefetchOutcome {
  readonly url: string;
  readonly result: 'stored' | 'revalidated' | 'cached' | 'not-stored' | 'failed' | 'refused';
  readonly detail?: string;
}

export interface PrefetchDeps {
  readonly handler: ProxyHandler;
  readonly rings: readonly Ring[];
  readonly destAcl: DestAcl;
  readonly s3?: S3Endpoint;
}

async function targetsOf(d: PrefetchDeps, url: string): Promise<Target[] | PrefetchOutcome> {
  if (url.startsWith('s3://')) {
    try {
      const t = await d.s3?.prefetchTargets(url);
      return t ?? { url, result: 'refused', detail: 'bucket not served here (--s3)' };
    } catch (err) {
      return { url, result: 'failed', detail: (err as Error).message };
    }
  }
  const r = resolveTarget(url, undefined, d.rings, d.destAcl);
  return r.ok ? [r.target] : { url, result: 'refused', detail: r.message };
}

export async function prefetchAll(d: PrefetchDeps, urls: readonly string[]): Promise<PrefetchOutcome[]> {
  const out: PrefetchOutcome[] = [];
  const work: Target[] = [];
  for (const url of urls) {
    const t = await targetsOf(d, url);
    if (Array.isArray(t)) work.push(...t);
    else out.push(t);
  }
  let next = 0;
  const worker = async () => {
    while (next < work.length) {
      const t = work[next++]!;
      const r = await d.handler.prefetch(t).catch((err: Error) => ({ result: 'failed' as const, detail: err.message }));
      out.push({ url: t.url, ...r });
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, work.length) }, worker));
  return out;
}
