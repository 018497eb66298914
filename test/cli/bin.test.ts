// The installed entry point, run as a user runs it.

import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const bin = new URL('../../bin/estuary.js', import.meta.url).pathname;

async function estuary(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('bin/estuary.js', () => {
  it('runs on the package Node (24) and prints help', async () => {
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(24);
    const r = await estuary(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: estuary <command> [options]');
  });
  it('prints the version', async () => {
    const r = await estuary(['--version']);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
  it('a bad flag is one line on stderr and exit 2', async () => {
    const r = await estuary(['--bogus']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'estuary: unknown option --bogus for estuary; run `estuary --help` to see the options\n',
    );
  });
  it('a mistyped flag is answered with the flag meant', async () => {
    const r = await estuary(['gateway', '--alow-dest', 'example.org']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'estuary: unknown option --alow-dest for estuary gateway; did you mean --allow-dest? ' +
        '(`estuary gateway --help` lists the options)\n',
    );
    const typo = await estuary(['mount', '--read-onyl', 'b', '/mnt']);
    expect(typo.stderr).toBe(
      'estuary: unknown option --read-onyl for estuary mount; did you mean --read-only? ' +
        '(`estuary mount --help` lists the options)\n',
    );
  });
  it('refuses an old Node with a readable message', async () => {
    const r = await run('/usr/bin/env', [
      'bash',
      '-c',
      `command -v /usr/bin/node >/dev/null && /usr/bin/node ${bin} --help; echo "rc=$?"`,
    ]).catch((e: { stdout: string; stderr: string }) => e);
    const old = await run('/usr/bin/node', ['--version'])
      .then((x) => x.stdout.trim())
      .catch(() => 'v99');
    if (Number(old.slice(1).split('.')[0]) < 22) {
      expect(r.stdout).toContain('rc=2');
      expect(r.stderr).toContain('needs Node.js 22.19 or newer');
    }
  });
  it("keeps its compiled code in the user's own cache directory between starts", async () => {
    const home = await mkdtemp(join(tmpdir(), 'estuary-cache-'));
    const files = async (dir: string) =>
      (await readdir(dir, { recursive: true }).catch(() => [] as string[])).length;
    try {
      const env: NodeJS.ProcessEnv = { ...process.env, XDG_CACHE_HOME: home };
      delete env.NODE_COMPILE_CACHE;
      await run(process.execPath, [bin, '--help'], { env: { ...env, NODE_DISABLE_COMPILE_CACHE: '1' } });
      expect(await files(join(home, 'estuary'))).toBe(0);
      await run(process.execPath, [bin, '--help'], { env });
      // One cache entry per module loaded: the CLI and what it imports, not a stray file or two.
      expect(await files(join(home, 'estuary', 'node-compile-cache'))).toBeGreaterThan(20);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
