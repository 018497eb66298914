// Keeping `estuary stage` small. Every chunk read from a file or the network is a fresh Buffer
// that lives until its socket has written it. Such buffers are freed only by a garbage collection,
// and a process that streams 100 MB/s of them while allocating few JavaScript objects collects
// rarely: measured, 70–90 MB of dead buffers piled up between collections (docs/BENCHMARKING.md).
// A young-generation collection every 16 MB moved frees them while they are still young, for about
// a millisecond each.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Bytes moved between two collections: 8 and 16 MB gave the same peak, 32 MB 15 MB more. */
const COLLECT_EVERY = 16 * 1024 * 1024;

type Gc = (options?: { type?: 'minor' | 'major'; execution?: 'sync' | 'async' }) => void;

function exposeGc(): Gc | undefined {
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as Gc;
  } catch {
    return undefined;
  }
}

/** A byte counter that runs a young-generation collection every COLLECT_EVERY bytes. */
export function bufferCollector(): (n: number) => void {
  const gc = exposeGc();
  let moved = 0;
  return (n) => {
    moved += n;
    if (moved < COLLECT_EVERY || !gc) return;
    moved = 0;
    gc({ type: 'minor' });
  };
}
