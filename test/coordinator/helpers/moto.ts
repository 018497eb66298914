// moto's server (PyPI) on a free loopback port: the EC2 API the coordinator's ec2 site is tested
// against, since no cloud is reachable from here. scripts/ensure-moto.sh installs it once.

import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { IN_CI, required } from '../../helpers/services.ts';
import { startChild } from '../../helpers/process.ts';

const SCRIPT = new URL('../../../scripts/ensure-moto.sh', import.meta.url).pathname;

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as { port: number };
  await new Promise((r) => srv.close(r));
  return port;
}

/** moto's endpoint, or undefined (with a note; in CI a failure) when it cannot be installed. */
export async function startMoto(): Promise<string | undefined> {
  let venv: string;
  try {
    const { stdout } = await promisify(execFile)('bash', [SCRIPT], { timeout: 300_000 });
    venv = stdout.trim().split('\n').pop()!;
  } catch (err) {
    const why = String((err as { stderr?: string }).stderr ?? err).trim().split('\n').pop()!;
    if (IN_CI) throw new Error(`CI=true and moto could not be installed: ${why}`, { cause: err });
    required('moto (PyPI)', false, `bash scripts/ensure-moto.sh (${why})`);
    return undefined;
  }
  const port = await freePort();
  const child = startChild(`${venv}/bin/moto_server`, ['-H', '127.0.0.1', '-p', String(port)]);
  await child.waitFor(/Running on http:\/\/127\.0\.0\.1/, 60_000);
  return `http://127.0.0.1:${port}`;
}
