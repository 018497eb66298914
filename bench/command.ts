// `estuary bench <scenario|all>`: measures estuary's parts against the tools sites use today and
// writes results.json, report.md and SVG charts. See docs/BENCHMARKING.md.

import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { defineCommand } from '../lib/command.ts';
import { option, optional } from '../lib/config/options.ts';
import { bool, int, list, oneOf, str, url } from '../lib/config/values.ts';
import { runCleanups } from './cleanup.ts';
import { benchErrors } from './errors.ts';
import { LiveDisplay } from './live.ts';
import { parseNetworkProfile } from './network-profile.ts';
import { FUSE_CASES } from './fuse/datasets.ts';
import { GATEWAY_CASES } from './gateway/cases.ts';
import { s3rverPackage } from './backends/s3rver.ts';
import { availableScenarios } from './registry.ts';
import { runBench } from './runner.ts';

/** Scenarios that talk to an S3 store (the bench's own, or --endpoint for fuse). */
const S3_SCENARIOS = ['fuse', 'staging', 'stage'];

const options = {
  out: optional(
    str('DIR'),
    'where results.json, report.md and the charts go (default bench-results/<timestamp>/)',
  ),
  quick: option(
    bool(),
    false,
    'every scenario at reduced size, in under two minutes: a smoke test, not a measurement',
  ),
  installPeers: option(
    bool(),
    false,
    'install missing Debian peers (s3fs, rclone, squid, nginx, varnish, wrk) first',
  ),
  network: option(
    str('PROFILE'),
    'local',
    'local, site-cloud (20ms RTT, 1gbit) or RTT,BANDWIDTH such as 50ms,100mbit',
    { scope: S3_SCENARIOS },
  ),
  endpoint: optional(
    url(),
    'a real S3 endpoint instead of a local server; keys from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY',
    { scope: ['fuse'] },
  ),
  backend: option(oneOf(['s3rver', 'swift'] as const), 's3rver', 'the local S3 server the bench starts', {
    scope: S3_SCENARIOS,
  }),
  runs: optional(int(1, 1000), 'repetitions of every case (default 3, or 1 with --quick)'),
  bucket: option(str('NAME'), 'estuary-bench', 'the bucket the S3 scenarios use (created if missing)', {
    scope: S3_SCENARIOS,
  }),
  peers: optional(
    list(str('NAME')),
    'only these peers: fuse (estuary, estuary-write-back, estuary-rclone-buffers, s3fs, rclone, goofys, geesefs, mountpoint-s3; the SDK-alone reference always runs), gateway (estuary in forward mode, squid, estuary-reverse, estuary-reverse-whole-tier, nginx, nginx-sndbuf, varnish; the node-http reference runs in every wrk case)',
    { scope: ['fuse', 'gateway'] },
  ),
  cases: optional(
    list(oneOf([...FUSE_CASES, ...GATEWAY_CASES], 'CASE')),
    'only these cases: fuse, Table 1 rows (1000x1MB, 100x10MB, 10x100MB, 1x1000MB) and the metadata suite; gateway, cached-small, cached-big, herd, mix and hostile (thousands of misbehaving origins)',
    { scope: ['fuse', 'gateway'] },
  ),
  scenarioFile: optional(
    list(str('FILE')),
    'coordinator: only these scenario files (YAML, docs/BENCHMARKING.md "Scenario files") instead of bench/coordinator/scenarios/',
    { scope: ['coordinator'] },
  ),
  workDir: optional(
    str('DIR'),
    'scratch space for datasets and server data (default the system temporary directory)',
  ),
};

function version(): string {
  const pkg = new URL('../package.json', import.meta.url);
  return (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version;
}

function timestamp(): string {
  return new Date()
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/:/g, '-');
}

export const command = defineCommand({
  name: 'bench',
  summary: 'measure estuary against s3fs, rclone, Squid, nginx, Varnish and friends',
  description:
    'Runs a benchmark scenario (or all of them) and writes results.json, report.md and SVG charts. ' +
    `Scenarios here: ${availableScenarios()
      .map((s) => `${s.name} (${s.summary})`)
      .join('; ')}. ` +
    'Peers take turns in every repetition (A, B, C, then again), so a busy moment is spread over all of them. ' +
    'report.md opens with a summary of the headline ratios and the load average of the machine. ' +
    'Missing peers become skipped columns; nothing is left mounted or running afterwards.',
  positionals: [
    {
      name: availableScenarios()
        .map((s) => s.name)
        .concat('all')
        .join('|'),
      describe: 'what to measure',
    },
  ],
  examples: [
    { cmd: 'estuary bench fuse --quick', what: 'a two-minute smoke run of the S3 mount comparison' },
    {
      cmd: 'estuary bench fuse --network site-cloud --runs 3',
      what: "the KEK paper's Table 1 over an emulated 20 ms, 1 Gbit/s link, with each mount's CPU and memory",
    },
    {
      cmd: 'estuary bench fuse --network site-cloud --peers estuary,rclone --cases 10x100MB,1x1000MB',
      what: 'two rows of Table 1 for two peers, in minutes instead of most of an hour',
    },
    {
      cmd: 'estuary bench gateway --cases hostile',
      what: 'thousands of misbehaving origins through the gateway with one and two workers: crashes, wrong bytes, memory',
    },
    {
      cmd: 'estuary bench all --out /srv/bench/today',
      what: 'every scenario, results in a chosen directory',
    },
    {
      cmd: 'AWS_ACCESS_KEY_ID=… AWS_SECRET_ACCESS_KEY=… estuary bench fuse --endpoint https://s3.example.org',
      what: 'against a real S3',
    },
  ],
  options,
  async run({ config, args, log }) {
    const known = availableScenarios();
    const wanted = args[0] === 'all' ? known : known.filter((s) => s.name === args[0]);
    if (wanted.length === 0)
      throw benchErrors.unknownScenario(args[0] ?? '', [...known.map((s) => s.name), 'all']);
    if (config.cases?.length === 0) throw benchErrors.noCases();
    const network = parseNetworkProfile(config.network);
    if (config.endpoint && network.name !== 'local') throw benchErrors.endpointWithBackend();
    if (config.endpoint && (!process.env.AWS_ACCESS_KEY_ID || !process.env.AWS_SECRET_ACCESS_KEY))
      throw benchErrors.endpointCredentials();
    if (!config.endpoint && config.backend === 's3rver' && wanted.some((s) => s.localS3)) s3rverPackage();
    const outDir = resolve(config.out ?? join('bench-results', timestamp()));
    if (existsSync(join(outDir, 'results.json'))) throw benchErrors.outNotEmpty(outDir);
    const abort = new AbortController();
    const onSignal = (name: string) => {
      if (abort.signal.aborted) {
        // A second signal: stop waiting for the scenario, undo what it started, leave.
        void runCleanups().finally(() => process.exit(130));
        return;
      }
      log.warn(
        { signal: name },
        'stopping: finishing the current step, cleaning up, writing what was measured',
      );
      abort.abort(new Error(name));
    };
    const onInt = () => onSignal('SIGINT');
    const onTerm = () => onSignal('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    const display = new LiveDisplay({
      isTTY: process.stdout.isTTY === true,
      columns: process.stdout.columns ?? 100,
      write: (t) => void process.stdout.write(t),
    });
    try {
      const outcome = await runBench({
        scenarios: wanted,
        quick: config.quick,
        outDir,
        workRoot: config.workDir ?? tmpdir(),
        installPeers: config.installPeers,
        network,
        backend: config.backend,
        endpoint: config.endpoint,
        runs: config.runs,
        extra: {
          bucket: config.bucket,
          ...(config.peers ? { peers: config.peers } : {}),
          ...(config.cases ? { cases: config.cases } : {}),
          ...(config.scenarioFile ? { scenarioFiles: config.scenarioFile.map((f) => resolve(f)) } : {}),
        },
        log,
        display,
        signal: abort.signal,
        version: version(),
      });
      process.stdout.write(
        `results: ${join(outcome.outDir, 'results.json')}\nreport:  ${join(outcome.outDir, 'report.md')}\n`,
      );
      return outcome.exitCode;
    } finally {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      await runCleanups();
    }
  },
});
