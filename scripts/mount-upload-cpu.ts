// What an upload through the mount costs, for one or more estuary source trees side by side: each
// run mounts a local s3rver bucket with every tree in turn (A, B, A, B) and copies the same files in
// with `cp -r` from the page cache, then reads the mount process's CPU time from
// /proc/PID/task/*/stat (the main thread, FUSE's thread named after it, and the rest: libuv's
// workers, which write the local copy of sent parts) and its peak memory (VmHWM). Prints every
// sample, the medians and the load average at each sample.
// Results: docs/BENCHMARKING.md, "The local copy with direct I/O".
//
//   node scripts/mount-upload-cpu.ts [--runs 3] [--files 1] [--mb 1000] [TREE ...]   (default: this tree)
//
// A TREE is a checkout with node_modules (`git archive main | tar -x -C /tmp/main` and a link to
// this tree's node_modules will do). Needs root or FUSE, and s3rver.

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadavg, median, mountBench, statCpuSeconds } from './mount-trees.ts';

const { values, positionals } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    files: { type: 'string', default: '1' },
    mb: { type: 'string', default: '1000' },
  },
  allowPositionals: true,
});
const RUNS = Number(values.runs);
const FILES = Number(values.files);
const BYTES = Number(values.mb) * 1e6;
const TREES = positionals.length > 0 ? positionals.map((t) => resolve(t)) : [resolve(import.meta.dirname, '..')];

const load1 = () => loadavg().split(' ')[0]!;

/** CPU seconds of the process's main thread (and FUSE's, which bears its name) and of the others. */
function cpu(pid: number): { main: number; workers: number } {
  const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  let main = 0;
  let workers = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const s = statCpuSeconds(stat);
    if (name === comm) main += s;
    else workers += s;
  }
  return { main, workers };
}

const hwm = (pid: number) => Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1000;

const bench = await mountBench('upload-cpu', 'up', (work) => {
  const src = join(work, 'src');
  mkdirSync(src);
  for (let i = 0; i < FILES; i++) {
    const piece = randomBytes(2 ** 20);
    const file = Buffer.allocUnsafe(BYTES);
    for (let at = 0; at < BYTES; at += piece.length) piece.copy(file, at, 0, Math.min(piece.length, BYTES - at));
    file.writeUInt32LE(i, 0);
    writeFileSync(join(src, `f${i}`), file);
  }
});
const { mnt, dataDir } = bench;
const src = join(bench.work, 'src');

type Sample = { mbs: number; main: number; workers: number; gb: number; peak: number };
const samples = new Map<string, Sample[]>(TREES.map((t) => [t, []]));
const GB = (FILES * BYTES) / 1e9;
try {
  for (let run = 1; run <= RUNS; run++) {
    for (const tree of TREES) {
      const child = await bench.mount(tree, true);
      const load = load1();
      const t0 = performance.now();
      execFileSync('cp', ['-r', src, join(mnt, `run-${run}`)]);
      const secs = (performance.now() - t0) / 1000;
      const c = cpu(child.pid);
      const s: Sample = { mbs: (FILES * BYTES) / 1e6 / secs, ...c, gb: (c.main + c.workers) / GB, peak: hwm(child.pid) };
      samples.get(tree)!.push(s);
      console.log(
        `run ${run} ${tree}: ${s.mbs.toFixed(1)} MB/s, CPU s main ${s.main.toFixed(2)} workers ${s.workers.toFixed(2)}, ` +
          `${s.gb.toFixed(2)} CPU s/GB, peak ${s.peak.toFixed(0)} MB, load ${load}-${load1()}`,
      );
      await child.stop('SIGTERM', 60_000);
      rmSync(join(dataDir, 'up', `run-${run}`), { recursive: true, force: true });
    }
  }
} finally {
  await bench.close();
}
for (const [tree, s] of samples) {
  const m = (f: (x: Sample) => number) => median(s.map(f)).toFixed(2);
  console.log(`${tree}: median ${m((x) => x.mbs)} MB/s, ${m((x) => x.gb)} CPU s/GB (workers ${m((x) => x.workers)} s), peak ${m((x) => x.peak)} MB`);
}
