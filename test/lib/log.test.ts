// Logs for people on a terminal, for machines elsewhere: with --log-format pretty (the default on a
// terminal) each event is one line with its local time and level word; otherwise JSON lines.

import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { prettyMessage } from '../../lib/log.ts';

const BIN = new URL('../../bin/estuary.js', import.meta.url).pathname;

function stderrOf(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } }, (_e, _o, stderr) => resolve(stderr));
  });
}

/** A loopback port nothing listens on (fetch refuses to try well-known ones such as 9). */
async function closedPort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

const PORT = await closedPort();
const ARGS = ['discover', '--server', `http://127.0.0.1:${PORT}`, '--fallback', 'DIRECT', '--server-timeout', '1s', '-v'];

describe('log lines', () => {
  it('are one line each on a terminal, in local time, with the level as a word', async () => {
    const before = new Date();
    const err = await stderrOf([...ARGS, '--log-format', 'pretty'], { TZ: 'Asia/Tokyo' });
    const hours = [before, new Date()].map((d) =>
      d.toLocaleTimeString('en-GB', { timeZone: 'Asia/Tokyo', hour: '2-digit', hourCycle: 'h23' }),
    );
    const lines = err.trim().split('\n');
    expect(lines).toHaveLength(3);
    for (const l of lines) expect(l).toMatch(/^\[\d\d:\d\d:\d\d\] (INFO|WARN): discover: \S/);
    expect(hours).toContain(lines[0]!.slice(1, 3));
    expect(lines[0]).toBe(
      `${lines[0]!.slice(0, 10)} WARN: discover: discovery server did not answer ` +
        `{"server":"http://127.0.0.1:${PORT}","err":"fetch failed (ECONNREFUSED)"}`,
    );
  });

  it('are JSON when not on a terminal', async () => {
    const err = await stderrOf(ARGS, {});
    for (const l of err.trim().split('\n')) expect(JSON.parse(l)).toHaveProperty('msg');
  });

  it('show an error as its name and message, the stack left to the JSON format', () => {
    const line = prettyMessage(
      { level: 40, time: 1, role: 'gateway', msg: 'upstream failed', err: { type: 'Error', message: 'boom', stack: 'Error: boom\n at x' }, url: '/a' },
      'msg',
    );
    expect(line).toBe('gateway: upstream failed {"err":"Error: boom","url":"/a"}');
  });
});

describe('what logging loads', () => {
  const loaded = (format: string) =>
    new Promise<string[]>((resolve, reject) => {
      const script = [
        "const { createLogger } = await import('./lib/log.ts');",
        `createLogger({ level: 'info', format: '${format}', role: 't' }).info('x');`,
        "const { createRequire } = await import('node:module');",
        "console.log(JSON.stringify(Object.keys(createRequire(import.meta.url).cache).filter((f) => f.includes('pino-pretty'))));",
      ].join('\n');
      execFile(process.execPath, ['--input-type=module', '-e', script], { cwd: new URL('../../', import.meta.url).pathname }, (e, out) =>
        e ? reject(e) : resolve(JSON.parse(out.trim().split('\n').at(-1)!) as string[]),
      );
    });

  it('JSON lines never load pino-pretty; the pretty format does', async () => {
    expect(await loaded('json')).toEqual([]);
    expect((await loaded('pretty')).length).toBeGreaterThan(0);
  });
});
