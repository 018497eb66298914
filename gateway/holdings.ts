// What the cache holds of named inputs, for the admin API's holdings endpoint: the coordinator
// asks it which of a job's declared inputs a site already has, to place work where its data is.
// An input is a URL or a prefix (s3://bucket/run42, http://host/dir/, cvmfs://repo.org); the
// disk tier is counted (memory entries are copies of disk ones). Pure.

import type { EntryMeta } from './cache/entry.ts';

export interface Held {
  readonly url: string;
  readonly bytes: number;
  readonly objects: number;
}

/** True when the cached object's URL lies under the input: itself, or below it as a directory. */
function under(objectUrl: string, input: string): boolean {
  if (objectUrl === input) return true;
  return objectUrl.startsWith(input.endsWith('/') ? input : `${input}/`);
}

export function holdingsOf(entries: Iterable<EntryMeta>, inputs: readonly string[]): Held[] {
  const totals = inputs.map((url) => ({ url, bytes: 0, objects: 0 }));
  const repos = inputs.map((url) => /^cvmfs:\/\/([^/]+)\/?$/.exec(url)?.[1]);
  for (const e of entries)
    for (let i = 0; i < inputs.length; i++) {
      const hit = repos[i] !== undefined ? e.repo === repos[i] : under(e.url, inputs[i]!);
      if (!hit) continue;
      totals[i]!.bytes += e.size;
      totals[i]!.objects++;
    }
  return totals;
}
