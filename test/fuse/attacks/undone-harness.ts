// Shared by the undone-* and putback2-* attacks: MinIO behind a relay that refuses CopyObject on
// demand, a mount with a 0 s cache TTL, and rmopen-harness.ts's python driver, which runs syscalls
// one at a time (fast enough to act within the second the kernel keeps its entry of a name).

import { createHash } from 'node:crypto';
import { type MinioServer, startMinio } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { type Mounted, mountBucket } from '../mount-helpers.ts';
import { Bucket } from './hidden-harness.ts';
import { ACCESS_DENIED, driver, startProxy, type Verdict } from './rmopen-harness.ts';

export { driver };

export interface Setup {
  server: MinioServer;
  bucket: Bucket;
  dir: string;
  /** The mount's process (for a kill -9). */
  mounted: Mounted;
  /** Mounts the bucket again through the relay, with the same cache directory. */
  remount(extra?: readonly string[]): Promise<Mounted>;
  /** What the mount has logged so far. */
  log(): string;
  refuse(on: boolean): void;
}

/** A mount that cannot read its callers' system calls (see untraceable-callers.mjs). */
export const UNTRACEABLE: NodeJS.ProcessEnv = { NODE_OPTIONS: `--import ${new URL('./untraceable-callers.mjs', import.meta.url).pathname}` };

/**
 * Both ways a mount handles a hide: knowing it is a rename's (it may read its callers' system
 * calls, as root may), and not (it removes the file first, and puts it back if the rename fails).
 */
export const CALLER_MODES: readonly [string, NodeJS.ProcessEnv][] = [
  ['callers traced', {}],
  ['callers untraceable', UNTRACEABLE],
];

export async function setup(
  name: string,
  extra: readonly string[] = [],
  other?: (method: string, path: string, headers: Record<string, unknown>) => Verdict,
  env: NodeJS.ProcessEnv = {},
): Promise<Setup> {
  const server = await startMinio();
  const bucket = new Bucket(server, `${name}-${process.pid}`);
  await bucket.create();
  let refuseCopy = false;
  const url = await startProxy(server.endpoint, (method, _path, headers) =>
    refuseCopy && method === 'PUT' && headers['x-amz-copy-source'] !== undefined ? { status: 403, body: ACCESS_DENIED } : (other?.(method, _path, headers) ?? 'pass'),
  );
  const cache = await tempDir('undone-cache-');
  const mount = (more: readonly string[]) =>
    mountBucket({ ...server, endpoint: url }, bucket.name, ['--cache-dir', cache, '--cache-ttl', '0s', '--request-timeout', '2s', '--retries', '1', ...more], env);
  const mounted = await mount(extra);
  return {
    server,
    bucket,
    dir: mounted.dir,
    mounted,
    remount: (more = extra) => mount(more),
    log: () => mounted.child.output(),
    refuse: (on) => {
      refuseCopy = on;
    },
  };
}

export const ORIGINAL = 'original-content';

/**
 * `name` written with ORIGINAL, held open by reader `r` of a new driver, and a `mv` of
 * `name-src` over it whose copy the relay refuses: libfuse hides the file, the rename fails, and
 * the mount undoes the hide (the kernel's entry of `name` still points at the hidden name).
 */
export async function failedMvOverReader(S: Setup, dir: string, name: string, expect: (v: unknown) => { toBe(x: unknown): void; toMatch(x: RegExp): void }) {
  const cmd = driver();
  const { join } = await import('node:path');
  const t = join(dir, name);
  const s = join(dir, `${name}-src`);
  expect(await cmd(`put ${t} ${ORIGINAL}`)).toBe('OK');
  expect(await cmd(`put ${s} source`)).toBe('OK');
  expect(await cmd(`open r ${t} 0`)).toBe('OK');
  expect(await cmd('sha r')).toBe(`OK ${sha(ORIGINAL)}`);
  S.refuse(true);
  const mv = await cmd(`rename ${s} ${t}`);
  S.refuse(false);
  expect(mv).toMatch(/^ERR/);
  return { cmd, t, s };
}

export const sha = (s: string) => createHash('sha256').update(s).digest('hex');
