// --help fits the terminal: every real command's help at 80 and 60 columns, words never broken,
// and errors of a command carry one prefix.

import { describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.ts';
import { commands } from '../../cli/commands.ts';
import { wrap, wrapCommand } from '../../cli/wrap.ts';

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
  it('breaks between words only, and keeps a longer word whole, moved left as far as it must', () => {
    expect(wrap('aa bb cc dd', 5)).toEqual(['aa bb', 'cc dd']);
    expect(wrap('a verylongwordthatdoesnotfit b', 10, 2)).toEqual(['  a', 'verylongwordthatdoesnotfit', '  b']);
    expect(wrap('a [ESTUARY_LONG_NAME]', 24, 8)).toEqual(['        a', '     [ESTUARY_LONG_NAME]']);
  });
});

describe('wrapCommand', () => {
  it('cuts a long example before its options, with shell continuations', () => {
    const cmd = 'estuary bench fuse --network site-cloud --peers estuary,rclone --cases 10x100MB,1x1000MB';
    expect(wrapCommand(cmd, 80)).toEqual([
      '  estuary bench fuse --network site-cloud --peers estuary,rclone \\',
      '      --cases 10x100MB,1x1000MB',
    ]);
    expect(wrapCommand('estuary mount b /mnt', 80)).toEqual(['  estuary mount b /mnt']);
  });
  it('cuts a list after its commas when it cannot fit whole, gluing the pieces', () => {
    expect(wrap('(default 127.0.0.0/8,::1/128,10.0.0.0/8)', 24, 2)).toEqual([
      '  (default 127.0.0.0/8,',
      '  ::1/128,10.0.0.0/8)',
    ]);
  });
});

describe('--help at 80 columns', () => {
  it('keeps every line of every command within 80 columns, examples and defaults included', async () => {
    for (const c of commands) {
      const cap = capture(80);
      expect(await runCli([...c.name.split(' '), '--help'], cap.io), c.name).toBe(0);
      for (const line of cap.out().split('\n')) expect(line.length, `${c.name}: ${line}`).toBeLessThanOrEqual(80);
    }
    const top = capture(80);
    await runCli(['--help'], top.io);
    for (const line of top.out().split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
  });

  it('says nothing of a default for a flag that is off unless given', async () => {
    const cap = capture(80);
    await runCli(['discover', '--help'], cap.io);
    expect(cap.out()).not.toContain('(default false)');
    expect(cap.out()).not.toContain('(the default output)');
  });
});

describe('--help at a terminal width', () => {
  for (const columns of [60]) {
    it(`keeps every command's help within ${columns} columns, except unbreakable words and examples`, async () => {
      for (const c of commands) {
        const words = c.name.split(' ');
        const cap = capture(columns);
        expect(await runCli([...words, '--help'], cap.io), c.name).toBe(0);
        const lines = cap.out().split('\n');
        const examples = lines.indexOf('Examples:');
        for (const [i, line] of lines.entries()) {
          if (line.length <= columns || (examples >= 0 && i > examples)) continue;
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
    expect(options).not.toMatch(/--backend|--network/);
    expect(options).toMatch(/--peers/);
    expect(options).toMatch(/--cases/); // the gateway's own cases (hostile origins among them)
    const all = capture();
    await runCli(['bench', '--help'], all.io);
    expect(all.out()).toMatch(/--cases[^]*--peers/);
  });
});
