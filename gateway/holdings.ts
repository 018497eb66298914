// What the cache holds of named inputs, for the admin API's holdings endpoint: the coordinator
// asks it which of a job's declared inputs a site already has, to place work where its data is.
// An input is a URL or a prefix (s3://bucket/run42, http://host/dir/, cvmfs://repo.org); the
// disk tier is counted (memory entries are copies of disk ones).
//
// A cache holds hundreds of thousands of objects and the coordinator asks every interval, so the
// inputs go into a map and each object looks up only its own URL and the directories above it
// (a few per object, not one per input), yielding to the event loop now and then so clients are
// not held up.

import type { EntryMeta } from './cache/entry.ts';

export interface Held {
  readonly url: string;
  readonly bytes: number;
  readonly objects: number;
}

/** Objects looked at between two yields to the event loop. */
const YIELD_EVERY = 20_000;

export async function holdingsOf(entries: Iterable<EntryMeta>, inputs: readonly string[]): Promise<Held[]> {
  const totals = inputs.map((url) => ({ url, bytes: 0, objects: 0 }));
  const byUrl = new Map<string, number[]>();
  const byRepo = new Map<string, number[]>();
  inputs.forEach((url, i) => {
    const repo = /^cvmfs:\/\/([^/]+)\/?$/.exec(url)?.[1];
    const index = repo === undefined ? byUrl : byRepo;
    const key = repo ?? url;
    index.set(key, [...(index.get(key) ?? []), i]);
  });
  const add = (i: number, e: EntryMeta) => {
    totals[i]!.bytes += e.size;
    totals[i]!.objects++;
  };
  let seen = 0;
  for (const e of entries) {
    if (e.repo !== undefined) for (const i of byRepo.get(e.repo) ?? []) add(i, e);
    // The URL itself, then each directory above it, with and without its slash. An input ending
    // in a slash and the same without it are different keys, so no object is counted twice.
    const url = e.url;
    for (const i of byUrl.get(url) ?? []) add(i, e);
    const root = url.indexOf('://') + 3;
    for (let k = url.lastIndexOf('/'); k > root; k = url.lastIndexOf('/', k - 1)) {
      for (const i of byUrl.get(url.slice(0, k)) ?? []) add(i, e);
      for (const i of byUrl.get(url.slice(0, k + 1)) ?? []) add(i, e);
    }
    if (++seen % YIELD_EVERY === 0) await new Promise((r) => setImmediate(r));
  }
  return totals;
}
