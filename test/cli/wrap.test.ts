// --help fits the terminal: every real command's help at 80 and 60 columns, words never broken,
// and errors of a command carry one prefix.

import { describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.ts';
import { commands } from '../../cli/commands.ts';
import { wrap } from '../../cli/wrap.ts';

function capture(columns?: number) {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: { stdout: (t: string) => out.push(t), stderr: (t: string) => err.push(t), env: {}, columns },
    out: () => out.join(''),
    err: () => err.join(''),
  };
}

describe('wrap', () => {
  it('breaks between words only, and keeps a longer word whole', () => {
    expect(wrap('aa bb cc dd', 5)).toEqual(['aa bb', 'cc dd']);
    expect(wrap('a verylongwordthatdoesnotfit b', 10, 2)).toEqual(['  a', '  verylongwordthatdoesnotfit', '  b']);
  });
});

describe('--help at a terminal width', () => {
  for (const columns of [80, 60]) {
    it(`keeps every command's help within ${columns} columns, except unbreakable words and examples`, async () => {
      for (const c of commands) {
        const words = c.name.split(' ');
        const cap = capture(columns);
        expect(await runCli([...words, '--help'], cap.io), c.name).toBe(0);
        const lines = cap.out().split('\n');
        const examples = lines.indexOf('Examples:');
        for (const [i, line] of lines.entries()) {
          if (line.length <= columns || (examples >= 0 && i > examples && line.startsWith('  ') && !line.startsWith('      '))) continue;
          // Only a single word (a default list, a URL) or an option's synopsis on its own line may
          // stand out.
          if (/^\s+(-\w, )?--\S+( \S+)?$/.test(line)) continue;
          expect(line.trim().split(/\s+/), `${c.name}: ${line}`).toHaveLength(1);
        }
      }
    });
  }

  it('wraps the command list too', async () => {
    const cap = capture(60);
    await runCli(['--help'], cap.io);
    for (const line of cap.out().split('\n')) expect(line.length, line).toBeLessThanOrEqual(60);
  });

  it('prints a command-named error with one prefix', async () => {
    const cap = capture();
    expect(await runCli(['bench', 'fuse', 'extra'], cap.io)).toBe(2);
    expect(cap.err()).toBe('estuary bench: unexpected argument extra; see `estuary bench --help`\n');
  });
});

describe('bench --help per scenario', () => {
  it('shows the options a scenario uses, and all of them without one', async () => {
    const fuse = capture();
    await runCli(['bench', 'fuse', '--help'], fuse.io);
    expect(fuse.out()).toMatch(/--cases/);
    expect(fuse.out()).toMatch(/Options \(for fuse; `estuary bench --help` lists all\)/);
    const gateway = capture();
    await runCli(['bench', 'gateway', '--help'], gateway.io);
    const options = gateway.out().split('Common options:')[0]!.split('Options (')[1]!;
    expect(options).not.toMatch(/--cases|--backend|--network/);
    expect(options).toMatch(/--peers/);
    const all = capture();
    await runCli(['bench', '--help'], all.io);
    expect(all.out()).toMatch(/--cases[^]*--peers/);
  });
});
