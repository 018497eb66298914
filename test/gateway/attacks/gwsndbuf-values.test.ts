// Attack: the values --send-buffer takes, as a flag, as ESTUARY_GATEWAY_SEND_BUFFER and as a
// config-file key (string and number forms). Each must either be taken (and --print-config shows
// what it became) or refused with exactly one line naming the option and exit status 2.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = new URL('../../../', import.meta.url).pathname;
/** Scratch of this run: files tests of other runs cannot overwrite. */
const DIR = mkdtempSync(join(tmpdir(), 'gwsndbuf-values-'));
afterAll(() => rmSync(DIR, { recursive: true, force: true }));

function run(args: string[], env: Record<string, string> = {}): { rc: number | null; out: string; value?: string } {
  const r = spawnSync(process.execPath, ['bin/estuary.js', 'gateway', ...args, '--print-config'], {
    cwd: ROOT,
    env: { ...process.env, ESTUARY_CONFIG: '', ESTUARY_SEND_BUFFER: '', ESTUARY_GATEWAY_SEND_BUFFER: '', ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  const out = (r.stdout + r.stderr).trim();
  const m = /"send-buffer":\s*\{\s*"value":\s*"([^"]*)",\s*"from":\s*"(\w+)"/.exec(out);
  return { rc: r.status, out, value: m ? `${m[1]} (${m[2]})` : undefined };
}

function refusedInOneLine(r: ReturnType<typeof run>, what: RegExp): void {
  expect(r.rc, r.out).toBe(2);
  expect(r.out.split('\n')).toHaveLength(1);
  expect(r.out).toMatch(what);
  expect(r.out).toMatch(/expected auto, off, or a size from 64KiB to 64MiB/);
}

describe('--send-buffer values', () => {
  it('flag: takes auto, off and 64KiB..64MiB (words and sizes trimmed); refuses the rest in one line, exit 2', () => {
    const taken: [string, string][] = [
      ['auto', 'auto (flag)'],
      ['off', 'off (flag)'],
      ['64KiB', '64KiB (flag)'],
      ['65536', '64KiB (flag)'],
      [' auto ', 'auto (flag)'],
      ['auto ', 'auto (flag)'],
      ['64MiB', '64MiB (flag)'],
      ['67108864', '64MiB (flag)'],
      ['512k', '500KiB (flag)'],
      ['64 KiB', '64KiB (flag)'],
    ];
    for (const [v, want] of taken) expect([v, run(['--send-buffer', v]).value]).toEqual([v, want]);
    for (const v of ['0', '4095', '4KiB', '32KiB', '65535', '65MiB', '67108865', '-1', '-4KiB', '1e9', '1000000000', 'AUTO', 'Off', '0x1000', 'big', 'NaN', 'Infinity']) {
      refusedInOneLine(run([`--send-buffer=${v}`]), /--send-buffer/);
    }
  }, 60_000);

  it('environment: ESTUARY_GATEWAY_SEND_BUFFER and ESTUARY_SEND_BUFFER, taken or refused the same way', () => {
    expect(run([], { ESTUARY_GATEWAY_SEND_BUFFER: '128KiB' }).value).toBe('128KiB (env)');
    expect(run([], { ESTUARY_SEND_BUFFER: 'off' }).value).toBe('off (env)');
    // the flag wins over the environment
    expect(run(['--send-buffer', '256KiB'], { ESTUARY_GATEWAY_SEND_BUFFER: 'off' }).value).toBe('256KiB (flag)');
    for (const v of ['0', '8KiB', '65MiB', 'AUTO', '-8KiB', 'of f']) {
      refusedInOneLine(run([], { ESTUARY_GATEWAY_SEND_BUFFER: v }), /send.buffer|SEND_BUFFER/i);
    }
  }, 60_000);

  // A value with a line break (an environment file edited on Windows, or a YAML block scalar):
  // sizes and words are taken alike, and a refusal quotes the value escaped, on one line.
  it('environment: a value ending in a line break is taken, or refused in one line', () => {
    expect(run([], { ESTUARY_GATEWAY_SEND_BUFFER: '64KiB\n' }).value).toBe('64KiB (env)');
    expect(run([], { ESTUARY_GATEWAY_SEND_BUFFER: 'auto\n' }).value).toBe('auto (env)');
    const r = run([], { ESTUARY_GATEWAY_SEND_BUFFER: 'au\nto' });
    refusedInOneLine(r, /ESTUARY_GATEWAY_SEND_BUFFER/);
    expect(r.out).toContain('"au\\nto"');
  }, 30_000);

  it('config file: strings and numbers, YAML and JSON, top level and under gateway:', () => {
    mkdirSync(DIR, { recursive: true });
    const cfg = (name: string, text: string) => {
      const f = join(DIR, name);
      writeFileSync(f, text);
      return run(['--config', f]);
    };
    expect(cfg('a.yaml', 'send-buffer: 65536\n').value).toBe('64KiB (file)');
    expect(cfg('b.yaml', 'send-buffer: "128KiB"\n').value).toBe('128KiB (file)');
    expect(cfg('c.yaml', 'gateway:\n  send_buffer: off\n').value).toBe('off (file)');
    expect(cfg('d.yaml', 'sendBuffer: 64MiB\n').value).toBe('64MiB (file)');
    expect(cfg('e.json', '{"send-buffer": 131072}').value).toBe('128KiB (file)');
    expect(cfg('f.json', '{"send-buffer": "auto"}').value).toBe('auto (file)');
    for (const [name, text] of [
      ['g.yaml', 'send-buffer: 4095\n'],
      ['g2.json', '{"send-buffer": 4096}'],
      ['h.yaml', 'send-buffer: 1e9\n'],
      ['i.yaml', 'send-buffer: -1\n'],
      ['j.yaml', 'send-buffer: 4096.5\n'],
      ['k.yaml', 'send-buffer: true\n'],
      ['l.yaml', 'send-buffer:\n'],
      ['m.yaml', 'send-buffer: [1, 2]\n'],
      ['n.json', '{"send-buffer": 67108865}'],
      ['o.json', '{"send-buffer": false}'],
      ['p.json', '{"send-buffer": {}}'],
      ['q.yaml', 'send-buffer: AUTO\n'],
    ]) {
      refusedInOneLine(cfg(name!, text!), /key send-buffer/);
    }
  }, 60_000);
});
