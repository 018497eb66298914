// Runs the chosen scenarios one after another and writes what they measured. Before anything
// starts it checks the disk; each scenario gets its own scratch directory, the live display and
// the abort signal; a scenario that throws is recorded as failed and the next one still runs.
// Whatever happened, everything registered for cleanup is undone before the results are written.
// The runner also records what a reader needs to trust the figures: the machine's load average
// at the start and end of the run and of each scenario, and whether every case's peers took
// turns (bench/interleave.ts), checked from the order in which the samples actually arrived.

import { mkdir, mkdtemp, rm, statfs } from 'node:fs/promises';
import { cpus, arch, hostname, loadavg, release, totalmem, type as osType } from 'node:os';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../lib/log.ts';
import { runCleanups } from './cleanup.ts';
import { runCommand } from './proc.ts';
import { benchErrors } from './errors.ts';
import { interleavingCheck, type SampleOrder } from './interleave.ts';
import type { LiveDisplay } from './live.ts';
import type { NetworkProfile } from './network-profile.ts';
import type { ScenarioEntry } from './registry.ts';
import {
  RESULTS_SCHEMA_VERSION,
  resultsSchema,
  scenarioRecord,
  type LoadRecord,
  type Results,
  type ScenarioRecord,
} from './results.ts';
import type { BenchContext } from './scenario.ts';
import type { SampleEvent } from './samples.ts';
import { formatNumber } from './stats.ts';
import { writeReport } from './report/write.ts';

export interface RunRequest {
  readonly scenarios: readonly ScenarioEntry[];
  readonly quick: boolean;
  readonly outDir: string;
  readonly workRoot: string;
  readonly installPeers: boolean;
  readonly network: NetworkProfile;
  readonly backend: string;
  readonly endpoint?: string;
  readonly runs?: number;
  /** Extra scenario settings (bucket, peers); passed through to every scenario. */
  readonly extra: Readonly<Record<string, unknown>>;
  readonly log: Logger;
  readonly display: LiveDisplay;
  readonly signal: AbortSignal;
  readonly version: string;
}

export interface RunOutcome {
  readonly results: Results;
  readonly outDir: string;
  readonly exitCode: number;
}

function osName(): string {
  try {
    const m = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'));
    return m?.[1] ?? osType();
  } catch {
    return osType();
  }
}

function machine(): Results['machine'] {
  const c = cpus();
  return {
    hostname: hostname(),
    os: osName(),
    kernel: release(),
    arch: arch(),
    cpuModel: c[0]?.model ?? 'unknown',
    cpus: Math.max(1, c.length),
    memoryBytes: totalmem(),
  };
}

/**
 * The git commit of the tree measured, "+changes" when files differ from it: estuary's own
 * columns are only reproducible against the exact code they ran.
 */
async function sourceCommit(): Promise<string | undefined> {
  const cwd = new URL('../', import.meta.url).pathname;
  const head = await runCommand('git', ['rev-parse', '--short=12', 'HEAD'], { cwd, timeoutMs: 5000 });
  if (head.code !== 0) return undefined;
  const dirty = await runCommand('git', ['status', '--porcelain', '--untracked-files=no'], {
    cwd,
    timeoutMs: 5000,
  });
  return `${head.output.trim()}${dirty.output.trim() ? '+changes' : ''}`;
}

function gib(n: number): string {
  return `${formatNumber(n / 2 ** 30)} GiB`;
}

async function checkDisk(req: RunRequest, settings: Record<string, unknown>): Promise<void> {
  let needed = 0;
  for (const s of req.scenarios) needed += await s.estimateBytes({ quick: req.quick, settings });
  const fs = await statfs(req.workRoot);
  const free = fs.bavail * fs.bsize;
  req.log.debug({ needed, free, dir: req.workRoot }, 'disk check');
  if (needed > free) throw benchErrors.notEnoughDisk(req.workRoot, gib(needed), gib(free));
}

/** os.loadavg() rounded to what the report shows; the raw float noise helps no one. */
function loadNow(): number[] {
  return loadavg().map((l) => Math.round(l * 100) / 100);
}

function failedRecord(name: string, seconds: number, err: unknown, load: LoadRecord): ScenarioRecord {
  return scenarioRecord(
    { scenario: name, settings: {}, peers: [], measurements: [], notes: [] },
    { durationSeconds: seconds, failure: (err as Error).message.split('\n')[0], load },
  );
}

async function runOne(
  req: RunRequest,
  entry: ScenarioEntry,
  settings: Record<string, unknown>,
): Promise<ScenarioRecord> {
  const workDir = await mkdtemp(join(req.workRoot, `estuary-bench-${entry.name}-`));
  const t0 = performance.now();
  const seconds = () => (performance.now() - t0) / 1000;
  req.display.startScenario(entry.name);
  const loadStart = loadNow();
  const order: SampleOrder[] = [];
  const ctx: BenchContext & { sample(e: SampleEvent): void } = {
    quick: req.quick,
    workDir,
    installPeers: req.installPeers,
    log: req.log.child({ scenario: entry.name }),
    signal: req.signal,
    progress: (line) => req.display.progress(line),
    sample: (e) => {
      order.push({ case: e.case, peer: e.peer });
      req.display.sample(e);
    },
    settings,
  };
  try {
    const scenario = await entry.load();
    const result = await scenario(ctx);
    const interleaving = interleavingCheck(order, result.measurements);
    if (interleaving.problems.length > 0)
      req.log.warn({ problems: interleaving.problems }, 'peers were not interleaved');
    const load = { start: loadStart, end: loadNow() };
    const record = scenarioRecord(result, { durationSeconds: seconds(), load, interleaving });
    const failed = record.peers.filter((p) => p.status === 'failed').map((p) => p.peer);
    req.display.finishScenario(
      `${entry.name}: done in ${formatNumber(seconds())} s${failed.length ? `; failed: ${failed.join(', ')}` : ''}`,
    );
    return record;
  } catch (err) {
    req.log.error({ err }, 'scenario failed');
    req.display.finishScenario(`${entry.name}: failed: ${(err as Error).message.split('\n')[0]}`);
    return failedRecord(entry.name, seconds(), err, { start: loadStart, end: loadNow() });
  } finally {
    const left = await runCleanups();
    if (left.length > 0) req.log.warn({ left }, 'could not undo everything this scenario started');
    await rm(workDir, { recursive: true, force: true });
  }
}

export async function runBench(req: RunRequest): Promise<RunOutcome> {
  const settings: Record<string, unknown> = {
    ...req.extra,
    network: req.network,
    backend: req.backend,
    ...(req.endpoint ? { endpoint: req.endpoint } : {}),
    ...(req.runs ? { runs: req.runs } : {}),
  };
  await mkdir(req.workRoot, { recursive: true });
  await checkDisk(req, settings);
  await mkdir(req.outDir, { recursive: true });
  const startedAt = new Date().toISOString();
  const loadStart = loadNow();
  const records: ScenarioRecord[] = [];
  for (const entry of req.scenarios) {
    if (req.signal.aborted) break;
    records.push(await runOne(req, entry, settings));
  }
  const versions: Record<string, string> = { estuary: req.version, node: process.versions.node };
  const commit = await sourceCommit();
  if (commit) versions.commit = commit;
  for (const r of records)
    for (const p of r.peers) if (p.version) versions[`${r.scenario}/${p.peer}`] = p.version;
  const results = resultsSchema.parse({
    schema: RESULTS_SCHEMA_VERSION,
    startedAt,
    finishedAt: new Date().toISOString(),
    interrupted: req.signal.aborted,
    machine: machine(),
    load: { start: loadStart, end: loadNow() },
    versions,
    settings: {
      scenarios: req.scenarios.map((s) => s.name),
      quick: req.quick,
      ...(req.runs ? { runs: req.runs } : {}),
      network: {
        name: req.network.name,
        rttMs: req.network.rttMs,
        ...(req.network.bandwidthBps ? { bandwidthBps: req.network.bandwidthBps } : {}),
      },
      backend: req.endpoint ? 'endpoint' : req.backend,
      ...(req.endpoint ? { endpoint: req.endpoint } : {}),
      out: req.outDir,
    },
    scenarios: records,
  });
  await writeReport(req.outDir, results);
  // Peers measured in blocks make a column's figures incomparable: the report is still written,
  // with the warning at its top, but the run does not pass as a good one.
  const outOfTurn = records.some((r) => (r.interleaving?.problems.length ?? 0) > 0);
  const failed = records.some((r) => r.status === 'failed');
  const exitCode = req.signal.aborted ? 130 : failed || outOfTurn ? 1 : 0;
  return { results, outDir: req.outDir, exitCode };
}
