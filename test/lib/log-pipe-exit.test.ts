// Any role whose log reader has gone (`estuary gateway 2>&1 | head -c 600`) still exits:
// flushLogs() drops lines nobody can read instead of retrying the write for ever, which sonic-boom
// does on EPIPE. The coordinator's own case, with SIGTERM, is
// test/coordinator/attacks/coordinator-sigterm-log-pipe.test.ts.

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { NODE } from '../helpers/process.ts';

const LOG = join(import.meta.dirname, '..', '..', 'lib', 'log.ts');

test('flushLogs returns at once when the reader of stderr has gone, lines still buffered', async () => {
  const script = `
    import { createLogger, flushLogs } from ${JSON.stringify(LOG)};
    const log = createLogger({ level: 'info', format: 'json', role: 'gateway' });
    process.stdin.once('data', () => {
      for (let i = 0; i < 5000; i++) log.info({ i, pad: 'x'.repeat(200) }, 'a line nobody reads');
      flushLogs();
      process.exit(0);
    });
  `;
  const child = spawn(NODE, ['--input-type=module', '-e', script], { stdio: ['pipe', 'ignore', 'pipe'] });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  // The reader goes away; only then does the child log and flush.
  child.stderr.destroy();
  await new Promise((r) => setTimeout(r, 500));
  child.stdin.write('go\n');
  const outcome = await Promise.race([exited, new Promise((r) => setTimeout(() => r('hung'), 8000))]);
  if (outcome === 'hung') child.kill('SIGKILL');
  expect(outcome).toBe(0);
}, 20_000);
