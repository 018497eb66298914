// SIGHUP (the terminal or ssh session running the coordinator closes) ends the process as
// Node's default does: at once, with no log line, and the site script in flight — in its own
// process group — is left running under PID 1. SIGINT/SIGTERM stop in order and kill what is
// still running past shutdown-timeout; SIGHUP must not leave more behind than they do.

import { execFileSync } from 'node:child_process';
import { afterAll, expect, test } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { fakeSlurm, pendingJob, sleep, startCoordinator } from './coordinator-fake-slurm.ts';

afterAll(runTeardowns);

function pidsOf(marker: string): number[] {
  const out = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((l) => l.includes(marker) && !l.includes('ps -eo'))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

test('SIGHUP during a deploy leaves no site script running', async () => {
  const slurm = fakeSlurm();
  slurm.setJobs([pendingJob(701)]);
  const marker = `${40 + (process.pid % 50)}.${process.pid % 1000}`;
  onTeardown(() => {
    for (const pid of pidsOf(`sleep ${marker}`))
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
  });
  const c = await startCoordinator(
    slurm,
    `    cloud:
      adapter: command
      quota: 1
      machine-types: [small]
      command: {start: "exec sleep ${marker}", stop: "true", status: "echo booting", timeout: 60s}
`,
    '  shutdown-timeout: 2s\n',
  );
  await c.child.waitFor(/starting drone/, 10_000);
  await sleep(500);
  expect(pidsOf(`sleep ${marker}`).length).toBe(1);
  c.child.proc.kill('SIGHUP');
  await Promise.race([c.child.exited, sleep(8000)]);
  await sleep(500);
  expect(pidsOf(`sleep ${marker}`), c.child.output().slice(-600)).toEqual([]);
}, 30_000);
