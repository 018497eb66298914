// Real mounts for tests: `estuary mount` in a child process (a hung FUSE operation cannot wedge
// the test worker), waited for in /proc/mounts, and always unmounted and killed in teardown.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { isMounted } from '../../fuse/mount-table.ts';
import { onTeardown } from '../helpers/cleanup.ts';
import { type Child, NODE, startChild } from '../helpers/process.ts';
import type { S3Server } from '../helpers/s3rver.ts';
import { required } from '../helpers/services.ts';
import { tempDir } from '../helpers/tmp.ts';

const BIN = new URL('../../bin/estuary.js', import.meta.url).pathname;

export function fuseAvailable() {
  return required(
    'FUSE',
    existsSync('/dev/fuse'),
    'a machine with /dev/fuse and the fuse package (fusermount)',
  );
}

export function sh(
  script: string,
  cwd?: string,
  timeoutMs = 120_000,
): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-c', script],
      { cwd, timeout: timeoutMs, maxBuffer: 64 * 2 ** 20 },
      (err, stdout, stderr) => {
        const code = err ? ((err as { code?: number }).code ?? 1) : 0;
        resolve({ code: typeof code === 'number' ? code : 1, out: `${stdout}${stderr}` });
      },
    );
  });
}

export function serverEnv(server: S3Server): NodeJS.ProcessEnv {
  return {
    ...process.env,
    AWS_ACCESS_KEY_ID: server.accessKeyId,
    AWS_SECRET_ACCESS_KEY: server.secretAccessKey,
    AWS_REGION: server.region,
  };
}

export interface Mounted {
  readonly dir: string;
  readonly child: Child;
}

export function runEstuary(args: readonly string[], env: NodeJS.ProcessEnv): Child {
  return startChild(NODE, [BIN, ...args], { env });
}

export async function mountBucket(
  server: S3Server,
  bucket: string,
  extra: readonly string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<Mounted> {
  const dir = await tempDir('estuary-mnt-');
  const child = runEstuary(
    ['mount', bucket, dir, '--endpoint', server.endpoint, '--log-format', 'json', ...extra],
    { ...serverEnv(server), ...env },
  );
  onTeardown(async () => {
    if (await isMounted(dir)) {
      const r = await sh(`fusermount -uz '${dir}' || umount -l '${dir}'`);
      if (r.code !== 0) console.warn(`could not unmount ${dir}: ${r.out}`);
    }
    await child.stop('SIGKILL');
  });
  await child.waitFor(/"msg":"mounted /, 30_000);
  if (!(await isMounted(dir))) throw new Error(`estuary said mounted but ${dir} is not in /proc/mounts`);
  return { dir, child };
}
