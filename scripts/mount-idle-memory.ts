// The memory a started mount holds after one small read, for one or more estuary source trees
// side by side: each run mounts a local s3rver bucket with every tree in turn (A, B, A, B), reads
// one 4 KiB file through the mount, waits for the mount to settle, and reads the mount process's
// VmRSS from /proc. Prints every sample, the medians and the load average before and after.
// Results: docs/BENCHMARKING.md, "What the mount holds without the AWS SDK".
//
//   node scripts/mount-idle-memory.ts [--runs 3] [--settle 3] [TREE ...]   (default: this tree)
//
// A TREE is a checkout with node_modules (`git archive main | tar -x -C /tmp/main` and a link to
// this tree's node_modules will do). Needs root or FUSE, and s3rver.

import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadavg, median, mountBench } from './mount-trees.ts';

const { values, positionals } = parseArgs({
  options: { runs: { type: 'string', default: '3' }, settle: { type: 'string', default: '3' } },
  allowPositionals: true,
});
const RUNS = Number(values.runs);
const SETTLE_MS = Number(values.settle) * 1000;
const TREES = positionals.length > 0 ? positionals.map((t) => resolve(t)) : [resolve(import.meta.dirname, '..')];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function vm(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m![1]) / 1000;
}

const bench = await mountBench('idle-memory', 'idle');
const { mnt } = bench;

const samples = new Map<string, { rss: number[]; hwm: number[] }>(TREES.map((t) => [t, { rss: [], hwm: [] }]));
console.log(`load average at the start: ${loadavg()}`);
try {
  const first = await bench.mount(TREES[0]!);
  writeFileSync(join(mnt, 'small'), Buffer.alloc(4096, 7));
  await first.stop('SIGTERM', 20_000);
  for (let run = 1; run <= RUNS; run++) {
    for (const tree of TREES) {
      const child = await bench.mount(tree);
      readFileSync(join(mnt, 'small'));
      await sleep(SETTLE_MS);
      const s = samples.get(tree)!;
      s.rss.push(vm(child.pid, 'VmRSS'));
      s.hwm.push(vm(child.pid, 'VmHWM'));
      console.log(`run ${run} ${tree}: VmRSS ${s.rss.at(-1)!.toFixed(1)} MB, VmHWM ${s.hwm.at(-1)!.toFixed(1)} MB, load ${loadavg()}`);
      await child.stop('SIGTERM', 20_000);
    }
  }
} finally {
  await bench.close();
}
for (const [tree, s] of samples)
  console.log(`${tree}: median VmRSS ${median(s.rss).toFixed(1)} MB (${s.rss.map((x) => x.toFixed(1)).join(', ')}), median VmHWM ${median(s.hwm).toFixed(1)} MB`);
console.log(`load average at the end: ${loadavg()}`);
