// OpenStack Swift with its S3 API (s3api) for tests: memcached and the account, container, object
// and proxy servers on free loopback ports, in a fresh directory, started by
// scripts/swift/aio.py and stopped after the test file. The launcher is the one tracked child;
// every server dies with it, even when it is SIGKILLed (see the launcher's docstring).

import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onTeardown } from './cleanup.ts';
import { type Child, startChild } from './process.ts';
import type { S3Server } from './s3rver.ts';
import { type Availability, required } from './services.ts';
import { tempDir } from './tmp.ts';

/** The Debian packages install the swift module for the system Python only. */
export const SWIFT_PYTHON = '/usr/bin/python3';
export const SWIFT_LAUNCHER = fileURLToPath(new URL('../../scripts/swift/aio.py', import.meta.url));
export const SWIFT_APT_INSTALL =
  'apt-get install -y swift swift-proxy swift-object swift-container swift-account memcached';

// Measured start is 2.1–2.5 s on 2 quiet cores, up to 10 s while other test files load them.
const START_TIMEOUT_MS = 45_000;
// Every server winds down within about a second of SIGTERM; the launcher SIGKILLs after 5 s.
const STOP_GRACE_MS = 10_000;

export interface SwiftOptions {
  /** Reuse a directory (objects already in it survive); default: a fresh temporary one. */
  readonly dataDir?: string;
  /**
   * Proxy (S3) port; default a free one. Tests never pick a fixed port; they pass the port of a
   * Swift they killed, to bring it back where its clients expect it.
   */
  readonly port?: number;
  /** Proxy and object server workers (default 2, as measured in docs/TESTING.md). */
  readonly workers?: number;
  /** Buckets to create before resolving. */
  readonly buckets?: readonly string[];
  readonly logLevel?: 'DEBUG' | 'INFO' | 'WARNING' | 'ERROR';
}

export interface SwiftServer extends S3Server {
  readonly kind: 'swift';
  readonly child: Child;
  /** Process ids of memcached, account, container, object and proxy (each leads its group). */
  readonly pids: Readonly<Record<string, number>>;
  /** Syslog lines of every server (requests, errors); read it when a test fails oddly. */
  readonly logFile: string;
  /** Seconds from the launcher's start to every server answering. */
  readonly startSeconds: number;
}

interface ReadyLine {
  endpoint: string;
  port: number;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  dataDir: string;
  pids: Record<string, number>;
  startSeconds: number;
}

/**
 * Whether Swift can run here with its store under the temporary directory: the packages are
 * installed and the filesystem takes user.* xattrs. In CI a missing piece fails the file.
 */
export async function swiftAvailable(): Promise<Availability> {
  const problem = await new Promise<string | null>((resolve) => {
    execFile(SWIFT_PYTHON, [SWIFT_LAUNCHER, 'check', tmpdir()], (err, _stdout, stderr) => {
      if (!err) resolve(null);
      else if ((err as NodeJS.ErrnoException).code === 'ENOENT') resolve(`${SWIFT_PYTHON} is missing`);
      else resolve(stderr.trim() || err.message);
    });
  });
  if (problem === null) return required('OpenStack Swift', true, '');
  const howTo = /apt-get|is missing/.test(problem) ? `${SWIFT_APT_INSTALL} (${problem})` : problem;
  return required('OpenStack Swift', false, howTo);
}

export async function startSwift(options: SwiftOptions = {}): Promise<SwiftServer> {
  const dataDir = options.dataDir ?? (await tempDir('estuary-swift-'));
  const args = [SWIFT_LAUNCHER, 'run', dataDir, '--die-with-parent'];
  if (options.port !== undefined) args.push('--port', String(options.port));
  if (options.workers !== undefined) args.push('--workers', String(options.workers));
  if (options.logLevel !== undefined) args.push('--log-level', options.logLevel);
  for (const b of options.buckets ?? []) args.push('--bucket', b);
  const child = startChild(SWIFT_PYTHON, args);
  const m = await child.waitFor(/^SWIFT_READY (\{.*\})$/m, START_TIMEOUT_MS);
  const ready = JSON.parse(m[1]!) as ReadyLine;
  const stop = async () => {
    await child.stop('SIGTERM', STOP_GRACE_MS);
  };
  // After startChild's own SIGKILL teardown, so it runs first: a graceful stop when it can.
  onTeardown(stop);
  return {
    kind: 'swift',
    endpoint: ready.endpoint,
    port: ready.port,
    accessKeyId: ready.accessKeyId,
    secretAccessKey: ready.secretAccessKey,
    region: ready.region,
    dataDir,
    child,
    pids: ready.pids,
    logFile: join(dataDir, 'log', 'swift.log'),
    startSeconds: ready.startSeconds,
    stop,
    kill: async () => {
      killGroup(ready.pids.proxy!);
      // The launcher sees the proxy die, stops the other servers and exits.
      await child.exited;
    },
  };
}

/** SIGKILL to a server's whole process group: the parent and its forked workers. */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}
