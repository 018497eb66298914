// `estuary coordinator status` prints to an admin's terminal. What a site script printed reaches
// it as the site's problem: no control character may pass (an escape sequence can retitle the
// window, clear the screen or hide lines), as reasons already guarantee.

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, test } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { NODE } from '../../helpers/process.ts';
import { fakeSlurm, pendingJob, sleep, startCoordinator } from './coordinator-fake-slurm.ts';

afterAll(runTeardowns);

const ROOT = join(import.meta.dirname, '..', '..', '..');

test('a site script printing escape sequences does not reach the terminal through `coordinator status`', async () => {
  const slurm = fakeSlurm();
  slurm.setJobs([pendingJob(201)]);
  const c = await startCoordinator(
    slurm,
    `    cloud:
      adapter: command
      quota: 1
      machine-types: [small]
      command: {start: "echo ID=1", stop: "true", status: "printf 'x\\\\033]0;owned\\\\007\\\\033[2J\\\\033[1A\\\\n' >&2; exit 1", timeout: 5s}
`,
  );
  let table = '';
  for (let i = 0; i < 30; i++) {
    await sleep(500);
    const s = await c.status();
    const sites = s.sites as { problem: string | null }[];
    if (sites[0]?.problem) {
      const r = await promisify(execFile)(NODE, [join(ROOT, 'bin', 'estuary.js'), 'coordinator', 'status', '--url', c.url], { cwd: ROOT });
      table = r.stdout;
      break;
    }
  }
  expect(table, 'the site never showed a problem').toContain('cloud');
  expect(table.replace(/\n/g, '')).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
}, 30_000);
