// Another process holding a lib/dir-lock.ts lock, as a running mount holds its staging
// directory's and its journal's: optionally in a PID namespace of its own, where its PIDs mean
// nothing to this one (a container sharing the cache directory).

import { spawnSync } from 'node:child_process';
import { onTeardown } from '../../helpers/cleanup.ts';
import { type Child, NODE, startChild } from '../../helpers/process.ts';

const DIR_LOCK = new URL('../../../lib/dir-lock.ts', import.meta.url).pathname;

/** `unshare -p` works here (root, or user namespaces allowed). */
export const pidNamespaces = spawnSync('unshare', ['-p', '-f', '--mount-proc', 'true']).status === 0;

/** Starts a process that takes `<dir>/<name>.lock` and holds it until killed. */
export async function holdLock(dir: string, name: string, ownPidNamespace = false): Promise<Child> {
  const script = `const { lockDirSync } = await import(${JSON.stringify(DIR_LOCK)});
lockDirSync(${JSON.stringify(dir)}, ${JSON.stringify(name)});
console.log('locked');
setInterval(() => {}, 60_000);`;
  const node = [NODE, '--input-type=module', '-e', script];
  const child = ownPidNamespace
    ? startChild('unshare', ['-p', '--kill-child', '--mount-proc', ...node])
    : startChild(node[0]!, node.slice(1));
  onTeardown(async () => {
    await child.stop('SIGKILL');
  });
  await child.waitFor(/locked/, 15_000);
  return child;
}
