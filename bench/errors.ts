// Errors `estuary bench` shows a user. Bad input (an unknown scenario, a malformed network profile,
// too little disk) exits 2 before anything starts; trouble while measuring is recorded in the
// results as a failed column instead, so one broken peer never costs the whole run.

import { type CodeDoc, codeTable, EstuaryError, type ErrorsSection } from '../lib/errors.ts';

/** Each code's row in docs/ERRORS.md, in the order listed there. */
export const BENCH_CODES = {
  ESTUARY_BENCH_UNKNOWN_SCENARIO: {
    meaning: 'the scenario named is not one this tree has (gateway and discovery appear once their modules exist)',
    fix: 'use one of the names listed, or `all`',
  },
  ESTUARY_BENCH_BAD_NETWORK: {
    meaning: '`--network` is not `local`, `site-cloud` or `RTT,BANDWIDTH` (such as `20ms,1gbit`)',
    fix: 'correct the value; see docs/BENCHMARKING.md, "Network profiles"',
  },
  ESTUARY_BENCH_DISK: {
    meaning: "the scratch directory's filesystem has less free space than the run needs (the estimate counts datasets, downloaded copies and the local server's objects)",
    fix: 'free space, point `--work-dir` at a larger filesystem, or use `--quick`',
  },
  ESTUARY_BENCH_CREDENTIALS: {
    meaning: '`--endpoint` was given without `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`',
    fix: 'export the keys (and `AWS_REGION`) for that endpoint',
  },
  ESTUARY_BENCH_ENDPOINT_NETWORK: {
    meaning: '`--endpoint` and an emulated `--network` were both given; a real S3 is measured over the real network',
    fix: 'drop `--network` (or drop `--endpoint` to emulate a link to a local server)',
  },
  ESTUARY_BENCH_NO_CASES: {
    meaning: '`--cases` was given but names nothing (an empty list)',
    fix: 'name what to measure, such as `--cases 10x100MB,1x1000MB` or `--cases metadata`, or drop the flag to run every case',
  },
  ESTUARY_BENCH_OUT_EXISTS: {
    meaning: '`--out` already holds a results.json',
    fix: 'choose a new directory; earlier results are never overwritten',
  },
  ESTUARY_BENCH_BACKEND: {
    meaning: 'the local S3 server (s3rver or Swift) did not start; exit 1',
    fix: 'the message carries the server\'s last line; for Swift see docs/BENCHMARKING.md, "Backends"',
  },
} satisfies Record<string, CodeDoc>;

export class BenchError extends EstuaryError {
  constructor(code: keyof typeof BENCH_CODES, message: string, exitCode = 2) {
    super(code, message, { exitCode });
    this.name = 'BenchError';
  }
}

export const benchErrors = {
  unknownScenario: (name: string, known: readonly string[]) =>
    new BenchError(
      'ESTUARY_BENCH_UNKNOWN_SCENARIO',
      `unknown scenario "${name}"; the scenarios available here are: ${known.join(', ')}`,
    ),
  badNetwork: (value: string, why: string) =>
    new BenchError(
      'ESTUARY_BENCH_BAD_NETWORK',
      `invalid --network "${value}": ${why}; use local, site-cloud or RTT,BANDWIDTH such as 20ms,1gbit`,
    ),
  notEnoughDisk: (dir: string, needed: string, free: string) =>
    new BenchError(
      'ESTUARY_BENCH_DISK',
      `not enough disk under ${dir}: this run needs about ${needed} but ${free} is free; ` +
        'free some space, point --work-dir elsewhere or use --quick',
    ),
  endpointCredentials: () =>
    new BenchError(
      'ESTUARY_BENCH_CREDENTIALS',
      '--endpoint needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_REGION)',
    ),
  endpointWithBackend: () =>
    new BenchError(
      'ESTUARY_BENCH_ENDPOINT_NETWORK',
      '--endpoint measures a real S3 over the real network: drop --network, it only emulates links to local servers',
    ),
  noCases: () =>
    new BenchError(
      'ESTUARY_BENCH_NO_CASES',
      '--cases names nothing to measure; name rows such as 10x100MB,1x1000MB or metadata, or drop it to run them all',
    ),
  outNotEmpty: (dir: string) =>
    new BenchError(
      'ESTUARY_BENCH_OUT_EXISTS',
      `--out ${dir} already holds results.json; choose another directory so earlier results are kept`,
    ),
  backendFailed: (backend: string, why: string) =>
    new BenchError(
      'ESTUARY_BENCH_BACKEND',
      `could not start the ${backend} S3 backend: ${why}; try --backend s3rver or --endpoint URL`,
      1,
    ),
};

/** This role's part of docs/ERRORS.md. */
export const benchErrorsDoc: ErrorsSection = {
  title: 'bench',
  intro:
    '`estuary bench` refuses bad input before it starts anything (exit 2). Trouble while measuring is not an error of the command: a peer that is missing or fails becomes a `skipped` or `failed` column in results.json and report.md, with the reason, and the run goes on. A run interrupted by SIGINT/SIGTERM cleans up, writes what it measured and exits 130; a scenario that could not run at all is marked failed and the command exits 1.',
  tables: [codeTable(BENCH_CODES)],
};
