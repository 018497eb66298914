// The install the README documents, done into a temporary prefix: `estuary` linked onto PATH runs
// from any directory with the package's own Node 24 even when the system Node is too old (this
// machine's /usr/bin/node is 20), and, without the package's Node (npm ci --omit=dev), with the
// node on PATH, whose age is checked.

import { execFile } from 'node:child_process';
import { copyFile, mkdir, readFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../helpers/cleanup.ts';
import { tempDir } from '../helpers/tmp.ts';

afterAll(runTeardowns);

const ROOT = new URL('../../', import.meta.url).pathname.replace(/\/$/, '');
const LINK = 'sudo ln -s /opt/estuary/bin/estuary /usr/local/bin/estuary';

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd: string) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(cmd, args, { env, cwd, timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** A PATH holding only `bin` and the system's directories, as a fresh login has. */
const pathWith = (...dirs: string[]) => ({ PATH: [...dirs, '/usr/bin', '/bin'].join(':'), HOME: '/tmp' });

describe('estuary on PATH, as the README installs it', () => {
  it('is the line the README gives', async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain(LINK);
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    expect(pkg.bin.estuary).toBe('bin/estuary');
  });

  it('runs `estuary --help` from PATH in another directory, with the package Node', async () => {
    const prefix = await tempDir('estuary-prefix-');
    await mkdir(join(prefix, 'bin'));
    // The README's link, with this checkout in place of /opt/estuary.
    await symlink(join(ROOT, 'bin/estuary'), join(prefix, 'bin/estuary'));
    const r = await run('estuary', ['--help'], pathWith(join(prefix, 'bin')), prefix);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: estuary <command> [options]');
  });

  describe('after npm ci --omit=dev (no package Node)', () => {
    /** A package tree whose launcher finds no node_modules/.bin/node. */
    async function bareInstall(): Promise<string> {
      const pkg = await tempDir('estuary-bare-');
      await mkdir(join(pkg, 'bin'));
      await copyFile(join(ROOT, 'bin/estuary'), join(pkg, 'bin/estuary'));
      // Node follows this link to the real file, so the TypeScript it imports stays outside node_modules.
      await symlink(join(ROOT, 'bin/estuary.js'), join(pkg, 'bin/estuary.js'));
      const prefix = join(pkg, 'prefix');
      await mkdir(join(prefix, 'bin'), { recursive: true });
      await symlink(join(pkg, 'bin/estuary'), join(prefix, 'bin/estuary'));
      return pkg;
    }

    it('uses a node on PATH that is new enough', async () => {
      const pkg = await bareInstall();
      const nodeDir = join(pkg, 'node22');
      await mkdir(nodeDir);
      await symlink(process.execPath, join(nodeDir, 'node'));
      const r = await run('estuary', ['--version'], pathWith(join(pkg, 'prefix/bin'), nodeDir), pkg);
      expect(r.stderr).toBe('');
      expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    });

    it('names a node on PATH that is too old, with exit 2', async () => {
      const old = await run('/usr/bin/node', ['--version'], {}, '/').catch(() => undefined);
      const major = Number(old?.stdout.trim().slice(1).split('.')[0] ?? 99);
      if (!old || old.code !== 0 || major >= 22) return; // needs an old system Node to show
      const pkg = await bareInstall();
      const r = await run('estuary', ['--help'], pathWith(join(pkg, 'prefix/bin')), pkg);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        `estuary: needs Node.js 22.19 or newer, found ${old.stdout.trim()}; run bin/estuary (the command ` +
          'the README links onto PATH), which uses the Node 24 that `npm ci` brings, or install Node 24\n',
      );
    });
  });

  it("the cron line's file puts the link's directory on cron's PATH", async () => {
    const doc = await readFile(join(ROOT, 'docs/DISCOVERY.md'), 'utf8');
    expect(doc).toMatch(/PATH=\/usr\/local\/bin:\/usr\/bin:\/bin\n\*\/30 \* \* \* \* root estuary discover /);
  });
});
