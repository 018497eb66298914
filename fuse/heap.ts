// The mount's young generation of the JavaScript heap, kept at the size V8 starts it with.
//
// V8 doubles the young generation (up to 128 MiB in Node 24) whenever many of the objects it
// holds are still alive at a scavenge, and hands the pages back only once the process is idle.
// A hundred readers at once keep that many requests, and their promises and closures, alive
// across scavenges: the young generation grew to its ceiling and was most of what the mount grew
// by past --memory-limit (128 of 160 MiB, docs/SEMANTICS.md "Memory"). The mount allocates little
// JavaScript per byte it moves (its bytes live in Buffers outside the heap), so a young generation
// that stays small costs nothing measurable: reading a 512 MiB file took 0.63 CPU s against 0.59
// (medians of three alternations, load 26). The flag is read at each scavenge, so setting it at
// start is enough; --max-semi-space-size would need Node to be started with it.

import v8 from 'node:v8';

export function keepYoungGenerationSmall(): void {
  v8.setFlagsFromString('--semi-space-growth-factor=1');
}
