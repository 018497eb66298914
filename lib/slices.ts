// Long synchronous work (parsing a few hundred thousand lines of a batch system's answer) done in
// slices, giving the event loop back between them: a daemon's timers, status API and /metrics
// keep answering while it runs.

import { setImmediate as yieldToLoop } from 'node:timers/promises';

/**
 * A slice's length: well under the shortest interval a daemon keeps (a second), and long enough
 * that giving the loop back costs nothing measurable.
 */
export const SLICE_MS = 20;

/** Items checked between looks at the time: a look costs about as much as a short item. */
const CHECK_EVERY = 256;

/** Calls `fn` on each item, yielding to the event loop whenever SLICE_MS have passed. */
export async function eachSliced<T>(items: Iterable<T>, fn: (item: T) => void, sliceMs = SLICE_MS): Promise<void> {
  let until = performance.now() + sliceMs;
  let n = 0;
  for (const item of items) {
    fn(item);
    if (++n % CHECK_EVERY === 0 && performance.now() >= until) {
      await yieldToLoop();
      until = performance.now() + sliceMs;
    }
  }
}

/** The lines of a text, without building an array of them. */
export function* linesOf(text: string): Generator<string> {
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    yield text.slice(start, end);
    start = end + 1;
  }
}

/** The items in runs of `size` (the last may be shorter). */
export function* runsOf<T>(items: readonly T[], size: number): Generator<readonly T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}
