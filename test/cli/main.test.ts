import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.ts';
import { tempDir } from '../helpers/tmp.ts';
import { fixtureCommand, seen } from './fixture-command.ts';

const registry = [{ name: 'fixture', summary: 'a command for tests', load: async () => fixtureCommand }];

function io(env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: { stdout: (t: string) => out.push(t), stderr: (t: string) => err.push(t), env },
    out: () => out.join(''),
    err: () => err.join(''),
  };
}

beforeEach(() => {
  seen.config = undefined;
});

describe('dispatch and help', () => {
  it('lists commands and shows per-command help with examples and env names', async () => {
    const a = io();
    expect(await runCli(['--help'], a.io, registry)).toBe(0);
    expect(a.out()).toMatch(/fixture\s+a command for tests/);
    const b = io();
    expect(await runCli(['fixture', '--help'], b.io, registry)).toBe(0);
    expect(b.out()).toContain('Usage: estuary fixture [options] TARGET');
    expect(b.out()).toContain('--mem-cache SIZE');
    expect(b.out()).toContain('ESTUARY_FIXTURE_MEM_CACHE');
    expect(b.out()).toContain('estuary fixture --listen :9000 x');
  });
  it('unknown commands and flags are one line and exit 2', async () => {
    const a = io();
    expect(await runCli(['frob'], a.io, registry)).toBe(2);
    expect(a.err()).toBe(
      'estuary: unknown command "frob"; the commands are: fixture (see `estuary --help`)\n',
    );
    const b = io();
    expect(await runCli(['fixture', '--bogus', 'x'], b.io, registry)).toBe(2);
    expect(b.err()).toBe(
      'estuary: unknown option --bogus for estuary fixture; run `estuary fixture --help` to see the options\n',
    );
    const c = io();
    expect(await runCli(['fixture', 'x', '--count'], c.io, registry)).toBe(2);
    expect(c.err()).toMatch(/^estuary: option --count of estuary fixture needs a value\n$/);
  });
  it('checks positional arguments', async () => {
    const a = io();
    expect(await runCli(['fixture'], a.io, registry)).toBe(2);
    expect(a.err()).toContain('missing TARGET');
    const b = io();
    expect(await runCli(['fixture', 'a', 'b'], b.io, registry)).toBe(2);
    expect(b.err()).toContain('unexpected argument b');
  });
});

describe('configuration through the CLI', () => {
  it('flags > environment > file > defaults', async () => {
    const dir = await tempDir();
    const file = join(dir, 'estuary.yaml');
    writeFileSync(file, 'fixture:\n  mem-cache: 64MiB\n  count: 4\n  peers: [a, b]\n');
    const a = io({ ESTUARY_FIXTURE_COUNT: '5' });
    expect(await runCli(['fixture', '-c', file, '--listen', '127.0.0.1:9', 'x'], a.io, registry)).toBe(0);
    expect(seen.config).toMatchObject({
      listen: { host: '127.0.0.1', port: 9 },
      memCache: 64 * 2 ** 20,
      count: 5,
      peers: ['a', 'b'],
      logLevel: 'info',
    });
    expect(seen.args).toEqual(['x']);
  });
  it('repeated list flags add up; short flags work', async () => {
    const a = io();
    expect(await runCli(['fixture', '--peers', 'a,b', '--peers', 'c', '-n', '2', 'x'], a.io, registry)).toBe(
      0,
    );
    expect(seen.config).toMatchObject({ peers: ['a', 'b', 'c'], count: 2 });
  });
  it('a bad value names the key, the value and what is allowed, and exits 2', async () => {
    const a = io({ ESTUARY_FIXTURE_MEM_CACHE: 'lots' });
    expect(await runCli(['fixture', 'x'], a.io, registry)).toBe(2);
    expect(a.err()).toBe(
      'estuary: invalid value "lots" for ESTUARY_FIXTURE_MEM_CACHE: expected a size such as 512MiB, 2GB or 1048576\n',
    );
    expect(seen.config).toBeUndefined();
  });
  it('a missing or broken config file is one line', async () => {
    const a = io();
    expect(await runCli(['fixture', '--config', '/nonexistent.yaml', 'x'], a.io, registry)).toBe(2);
    expect(a.err()).toBe('estuary: cannot read config file /nonexistent.yaml: no such file\n');
    const dir = await tempDir();
    writeFileSync(join(dir, 'bad.yaml'), 'a: [1,\n');
    const b = io({ ESTUARY_CONFIG: join(dir, 'bad.yaml') });
    expect(await runCli(['fixture', 'x'], b.io, registry)).toBe(2);
    expect(b.err()).toMatch(/^estuary: config file .*bad.yaml is not valid YAML or JSON: .+\n$/);
  });
  it('--print-config shows values and their sources, secrets hidden', async () => {
    const a = io({ ESTUARY_TOKEN: 'hunter2' });
    expect(await runCli(['fixture', '--print-config', '--count', '7'], a.io, registry)).toBe(0);
    const printed = JSON.parse(a.out());
    expect(printed.count).toEqual({ value: '7', from: 'flag' });
    expect(printed.token).toEqual({ value: '<hidden>', from: 'env' });
    expect(a.out()).not.toContain('hunter2');
  });
});

describe('a command whose module needs a package the install left out', () => {
  it('names the package and how to install it, in one line, with exit 2', async () => {
    const name = 'estuary-no-such-package';
    const missing = [{ name: 'geo', summary: 'needs a package', load: async () => (await import(name)) as never }];
    const a = io();
    expect(await runCli(['geo'], a.io, missing)).toBe(2);
    const root = new URL('../../', import.meta.url).pathname.replace(/\/$/, '');
    expect(a.err()).toBe(
      `estuary geo needs the npm package ${name}, which this install left out (npm ci --omit=optional); ` +
        `run \`npm ci --omit=dev\` in ${root} to install it\n`,
    );
  });
});
