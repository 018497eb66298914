// What the mount measurement scripts share: a local s3rver with one bucket, and a mount of it
// started from a given estuary source tree (so trees can be compared side by side, A, B, A, B).

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startS3rver } from '../bench/backends/s3rver.ts';
import { type BenchChild, startProcess } from '../bench/proc.ts';

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
export const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

const TICK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));

/** User + system CPU seconds in a /proc stat line, of a process or of one of its threads. */
export function statCpuSeconds(stat: string): number {
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / TICK;
}

/** CPU seconds of a whole process so far (every thread, live or ended). */
export const processCpuSeconds = (pid: number | 'self'): number => statCpuSeconds(readFileSync(`/proc/${pid}/stat`, 'utf8'));

export interface MountBench {
  readonly work: string;
  /** s3rver's data directory: the bucket's objects are under <dataDir>/<bucket>/. */
  readonly dataDir: string;
  readonly mnt: string;
  /** The s3rver endpoint, for a client of its own. */
  readonly endpoint: string;
  /** Mounts the bucket at `mnt` with `tree`'s estuary (an empty cache dir when `freshCache`). */
  mount(tree: string, freshCache?: boolean): Promise<BenchChild>;
  /** Stops s3rver and removes everything under `work`. */
  close(): Promise<void>;
}

/** A work directory, s3rver serving `bucket` from it, and an empty mount point; `prepare` runs before s3rver starts. */
export async function mountBench(name: string, bucket: string, prepare?: (work: string) => void): Promise<MountBench> {
  const work = mkdtempSync(join(tmpdir(), `estuary-${name}-`));
  const dataDir = join(work, 's3rver');
  mkdirSync(join(dataDir, bucket), { recursive: true });
  prepare?.(work);
  const server = await startS3rver({ host: '127.0.0.1', execPrefix: [], dataDir });
  const endpoint = `http://127.0.0.1:${server.port}`;
  const env = { ...process.env, AWS_ACCESS_KEY_ID: server.accessKeyId, AWS_SECRET_ACCESS_KEY: server.secretAccessKey };
  const mnt = join(work, 'mnt');
  mkdirSync(mnt);
  const cache = join(work, 'cache');
  return {
    work,
    dataDir,
    mnt,
    endpoint,
    async mount(tree, freshCache = false) {
      if (freshCache) rmSync(cache, { recursive: true, force: true });
      const args = [join(tree, 'bin', 'estuary.js'), 'mount', bucket, mnt, '--endpoint', endpoint, '--cache-dir', cache];
      const child = startProcess('estuary', process.execPath, args, { env, cwd: tree });
      await child.waitFor(/mounted/, 30_000);
      return child;
    },
    async close() {
      await server.stop();
      rmSync(work, { recursive: true, force: true });
    },
  };
}
