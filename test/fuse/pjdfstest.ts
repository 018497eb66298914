// pjdfstest on real mounts: the cases of pjdfstest-cases.ts run against `estuary mount` over
// OpenStack Swift's S3 API, in the default mode and with --write-back at the same time, and every
// case that does not answer "ok" is reported with what pjdfstest said about it.
//
// Swift, not s3rver: s3rver keeps each object in a file named after its key plus a suffix, so a
// 255-byte name (NAME_MAX, which pjdfstest's ENAMETOOLONG cases create) is too long for its disk,
// and the server dies on the request.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Availability, required } from '../helpers/services.ts';
import { startSwift } from '../helpers/swift.ts';
import { tempDir } from '../helpers/tmp.ts';
import { mountBucket, sh } from './mount-helpers.ts';
import { PJDFSTEST_CASES } from './pjdfstest-cases.ts';

const ENSURE = fileURLToPath(new URL('../../scripts/ensure-pjdfstest.sh', import.meta.url));

// naptime is how long pjdfstest sleeps between two stats that must show different times. The
// mount keeps times to the millisecond, so 50 ms is ample; a whole second, the stores' grain,
// would make the run several times longer.
const CONFIG = `[features]
posix_fallocate = {}
utimensat = {}
utime_now = {}
rename_ctime = {}

[settings]
naptime = 0.05
allow_remount = false

[dummy_auth]
entries = [["nobody", "nogroup"], ["daemon", "daemon"], ["bin", "bin"]]
`;

function pjdfstestBinary(): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [ENSURE, '--path'], (err, stdout) => (err ? reject(err) : resolve(stdout.trim())));
  });
}

/** Whether pjdfstest has been built here (CI builds it first; outside CI its tests are skipped). */
export async function pjdfstestAvailable(): Promise<Availability> {
  const bin = await pjdfstestBinary();
  return required('pjdfstest', existsSync(bin), `bash scripts/ensure-pjdfstest.sh (builds ${bin} from crates.io)`);
}

/** What pjdfstest printed for each case: "ok", or the verdict and the lines that explain it. */
export function parseResults(output: string): Map<string, string> {
  const results = new Map<string, string>();
  let current: string | undefined;
  for (const line of output.split('\n')) {
    const m = /^([a-z0-9_]+(?:::[a-z0-9_]+)+)\s+(ok|FAILED|skipped|PASSED UNEXPECTEDLY|failed as expected)$/.exec(
      line.trimEnd(),
    );
    if (m) {
      current = m[1]!;
      results.set(current, m[2]!);
    } else if (current && results.get(current) !== 'ok' && line.startsWith('\t') && !/^\s+\d+:/.test(line)) {
      results.set(current, `${results.get(current)}; ${line.trim()}`);
    }
  }
  return results;
}

/** The cases of `groups`, as pjdfstest names them. */
export function casesOf(groups: readonly string[]): string[] {
  return groups.flatMap((g) => (PJDFSTEST_CASES[g] ?? []).map((c) => `${g}::${c}`));
}

/** Runs `cases` in `dir` (on a mount) and returns "case: verdict" for each one that did not pass. */
async function runCases(bin: string, config: string, dir: string, cases: readonly string[]): Promise<string[]> {
  const names = cases.map((c) => `pjdfstest::tests::${c}`).join(' ');
  const r = await sh(`NO_COLOR=1 '${bin}' -e -c '${config}' -p '${dir}' ${names}`, undefined, 600_000);
  const results = parseResults(r.out);
  return cases.filter((c) => results.get(c) !== 'ok').map((c) => `${c}: ${results.get(c) ?? 'not run'}`);
}

/**
 * Mounts one Swift bucket twice, in the default mode and with --write-back, runs the cases of
 * `groups` on both at once, and returns what did not pass, prefixed by the mode.
 */
export async function pjdfstestOnBothModes(groups: readonly string[]): Promise<string[]> {
  const bin = await pjdfstestBinary();
  const work = await tempDir('estuary-pjdfstest-');
  const config = join(work, 'pjdfstest.toml');
  await writeFile(config, CONFIG);
  const server = await startSwift({ buckets: ['pjd'] });
  const cases = casesOf(groups);
  const modes = [
    { name: 'default', args: [] as string[], prefix: 'default' },
    { name: 'write-back', args: ['--write-back', '--cache-dir', join(work, 'journal')], prefix: 'write-back' },
  ];
  const failures = await Promise.all(
    modes.map(async (mode) => {
      const m = await mountBucket(server, `pjd/${mode.prefix}`, mode.args);
      const failed = await runCases(bin, config, m.dir, cases);
      return failed.map((f) => `${mode.name}: ${f}`);
    }),
  );
  return failures.flat();
}
