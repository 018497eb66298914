// `estuary mount` runs for the cache-directory attacks: started in the background with JSON logs,
// waited for, stopped, and always unmounted and killed in teardown.

import { isMounted } from '../../../fuse/mount-table.ts';
import { onTeardown } from '../../helpers/cleanup.ts';
import type { Child } from '../../helpers/process.ts';
import type { S3Server } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { runEstuary, serverEnv, sh } from '../mount-helpers.ts';

export interface Run {
  readonly dir: string;
  readonly child: Child;
}

/** `estuary mount` in the background, unmounted and killed in teardown. */
export async function mount(server: S3Server, source: string, extra: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const dir = await tempDir('estuary-atk-cache-mnt-');
  const child = runEstuary(['mount', source, dir, '--endpoint', server.endpoint, '--log-format', 'json', ...extra], {
    ...serverEnv(server),
    ...env,
  });
  onTeardown(async () => {
    if (await isMounted(dir)) await sh(`fusermount -uz '${dir}'`);
    await child.stop('SIGKILL');
  });
  return { dir, child };
}

export async function mounted(run: Run): Promise<Run> {
  await run.child.waitFor(/"msg":"mounted /, 30_000);
  return run;
}

/** A second start: whether it mounted (then unmounted again) and what it said. */
export async function secondStart(run: Run): Promise<{ mounted: boolean; out: string; code: number | null }> {
  const isUp = await Promise.race([
    run.child.waitFor(/"msg":"mounted /, 30_000).then(() => true, () => false),
    run.child.exited.then(() => false),
  ]);
  if (isUp) await sh(`fusermount -u '${run.dir}' || fusermount -uz '${run.dir}'`);
  const code = await run.child.stop('SIGTERM', 10_000);
  return { mounted: isUp, out: run.child.output(), code };
}

export async function unmount(run: Run): Promise<void> {
  await sh(`fusermount -u '${run.dir}' || fusermount -uz '${run.dir}'`);
  await run.child.stop('SIGTERM', 15_000);
}

