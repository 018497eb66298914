// OpenStack Swift with its S3 API as the backend, launched by the project's own all-in-one
// launcher (scripts/swift/aio.py: memcached plus account, container, object and proxy servers,
// killed together with it). In the emulated link every server listens on the namespace's address.

import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startProcess } from '../proc.ts';
import type { ServerPlacement, StartedServer } from './backend.ts';

/** The Debian packages install the swift module for the system Python only. */
const PYTHON = '/usr/bin/python3';
const LAUNCHER = fileURLToPath(new URL('../../scripts/swift/aio.py', import.meta.url));
// Measured start is 3.5–5 s on 2 cores; the margin covers a loaded machine.
const START_TIMEOUT_MS = 45_000;

/** Why Swift cannot run here (packages missing, no user.* xattrs), or undefined when it can. */
export function swiftProblem(dir: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(PYTHON, [LAUNCHER, 'check', dir], (err, _out, stderr) =>
      resolve(err ? stderr.trim() || err.message : undefined),
    );
  });
}

export async function startSwift(placement: ServerPlacement): Promise<StartedServer> {
  const problem = await swiftProblem(placement.dataDir);
  if (problem)
    throw new Error(`${problem}; --install-peers does not install Swift, see docs/BENCHMARKING.md`);
  const args = [
    LAUNCHER,
    'run',
    placement.dataDir,
    '--host',
    placement.host,
    '--die-with-parent',
    '--log-level',
    'WARNING',
  ];
  const [cmd, ...prefix] = [...placement.execPrefix, PYTHON];
  const child = startProcess('swift', cmd!, [...prefix, ...args]);
  const m = await child.waitFor(/^SWIFT_READY (\{.*\})$/m, START_TIMEOUT_MS);
  const ready = JSON.parse(m[1]!) as {
    port: number;
    accessKeyId: string;
    secretAccessKey: string;
    region: string;
    version?: string;
  };
  return {
    kind: 'swift',
    port: ready.port,
    accessKeyId: ready.accessKeyId,
    secretAccessKey: ready.secretAccessKey,
    region: ready.region,
    version: `${ready.version ?? 'OpenStack Swift'} with s3api`,
    stop: async () => {
      await child.stop('SIGTERM', 10_000);
    },
  };
}
