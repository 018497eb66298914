// Errors `estuary bench` shows a user. Bad input (an unknown scenario, a malformed network profile,
// too little disk) exits 2 before anything starts; trouble while measuring is recorded in the
// results as a failed column instead, so one broken peer never costs the whole run.

import { EstuaryError } from '../lib/errors.ts';

export class BenchError extends EstuaryError {
  constructor(code: string, message: string, exitCode = 2) {
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
