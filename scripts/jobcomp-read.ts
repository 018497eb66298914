// CPU time of one read of Slurm's job completion log by the coordinator, a log of 200 MB (about
// 480,000 records): read whole and parsed, as every read did before the log was followed, against
// a read that continues from the last one after slurmctld wrote one more record, and a followed
// read from the file's start (after a restart or a rotation). Each read's jobs go into a run-time
// history that already holds the log's jobs, as RunHistory's do. Interleaved (whole, from the
// start, one record, whole, …), medians:
//   node_modules/.bin/node scripts/jobcomp-read.ts [MB] [ROUNDS]
// docs/BENCHMARKING.md, "Coordinator", gives the figures.

import { appendFileSync, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompletionLogFile } from '../coordinator/batch/jobcomp-file.ts';
import { parseJobCompSliced } from '../coordinator/batch/jobcomp-parse.ts';
import { RunTimeHistory } from '../coordinator/run-times.ts';
import { eachSliced } from '../lib/slices.ts';

const MAX_BYTES = 500 * 1024 * 1024;

export function record(id: number): string {
  const user = `user${id % 97}`;
  const s = 30 + (id % 3000);
  const end = new Date(Date.UTC(2026, 10, 1) + s * 1000).toISOString().slice(0, 19);
  return `JobId=${id} UserId=${user}(${2000 + (id % 97)}) GroupId=${user}(${2000 + (id % 97)}) Name=job-${id % 41} JobState=COMPLETED Partition=hybrid TimeLimit=60 StartTime=2026-11-01T00:00:00 EndTime=${end} NodeList=n${id % 400} NodeCnt=1 ProcCnt=1 WorkDir=/home/${user}/run ReservationName= Tres=cpu=1,mem=1G,node=1,billing=1 Account=proj QOS=normal WcKey= Cluster=c SubmitTime=2026-10-31T23:59:00 EligibleTime=2026-10-31T23:59:00 DerivedExitCode=0:0 ExitCode=0:0 \n`;
}

export async function writeLog(path: string, bytes: number): Promise<number> {
  const out = createWriteStream(path);
  let written = 0;
  let id = 1;
  while (written < bytes) {
    let chunk = '';
    for (let i = 0; i < 2000; i++) chunk += record(id++);
    written += chunk.length;
    if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r) => out.end(() => r()));
  return id;
}

/** CPU (user + system) and wall milliseconds of `f`. */
async function timed(f: () => Promise<void>): Promise<{ cpuMs: number; wallMs: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await f();
  const c = process.cpuUsage(c0);
  return { cpuMs: (c.user + c.system) / 1000, wallMs: performance.now() - t0 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

if (import.meta.url === `file://${process.argv[1]}`) {
  const mb = Number(process.argv[2] ?? 200);
  const rounds = Number(process.argv[3] ?? 3);
  const dir = mkdtempSync(join(tmpdir(), 'estuary-jobcomp-bench-'));
  try {
    const path = join(dir, 'jobcomp.txt');
    let next = await writeLog(path, mb * 1024 * 1024);
    const history = new RunTimeHistory();
    const followed = new CompletionLogFile(['hybrid'], MAX_BYTES);
    const first = await timed(async () => void (await eachSliced((await followed.read(path)).jobs, (j) => history.add([j]))));
    const full: number[] = [];
    const fresh: number[] = [];
    const one: number[] = [];
    for (let r = 0; r < rounds; r++) {
      appendFileSync(path, record(next++));
      full.push((await timed(async () => void (await eachSliced((await parseJobCompSliced(await readFile(path, 'utf8'), ['hybrid'])).jobs, (j) => history.add([j]))))).cpuMs);
      appendFileSync(path, record(next++));
      const restarted = new CompletionLogFile(['hybrid'], MAX_BYTES);
      fresh.push((await timed(async () => void (await eachSliced((await restarted.read(path)).jobs, (j) => history.add([j]))))).cpuMs);
      appendFileSync(path, record(next++));
      one.push((await timed(async () => void (await eachSliced((await followed.read(path)).jobs, (j) => history.add([j]))))).cpuMs);
    }
    console.log(`log: ${mb} MB, ${next - 1} records; jobs learned: ${history.size}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    console.log(`first read, followed (from the start): ${first.cpuMs.toFixed(0)} ms CPU, ${first.wallMs.toFixed(0)} ms wall`);
    console.log(`whole read (before): median ${median(full).toFixed(0)} ms CPU of [${full.map((x) => x.toFixed(0)).join(', ')}]`);
    console.log(`followed, from the start (a restart or a rotation): median ${median(fresh).toFixed(0)} ms CPU of [${fresh.map((x) => x.toFixed(0)).join(', ')}]`);
    console.log(`followed read of one new record: median ${median(one).toFixed(2)} ms CPU of [${one.map((x) => x.toFixed(2)).join(', ')}]`);
    console.log(`ratio: ${(median(full) / median(one)).toFixed(0)}×`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
