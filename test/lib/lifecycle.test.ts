import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runUntilSignalled } from '../../lib/lifecycle.ts';
import { createLogger } from '../../lib/log.ts';

function quietLog() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { log: createLogger({ level: 'info', format: 'json', role: 'test', stream }), lines };
}

describe('runUntilSignalled', () => {
  it('stops the service on SIGTERM and exits 0', async () => {
    const signals = new EventEmitter();
    const { log, lines } = quietLog();
    let stopped = false;
    const done = runUntilSignalled(
      {
        async stop() {
          stopped = true;
        },
      },
      { log, shutdownTimeoutMs: 1000, signals },
    );
    signals.emit('SIGTERM');
    expect(await done).toBe(0);
    expect(stopped).toBe(true);
    expect(lines.join('')).toContain('"role":"test"');
    expect(signals.listenerCount('SIGTERM')).toBe(0);
  });
  it('aborts in-flight work at the deadline', async () => {
    const signals = new EventEmitter();
    const { log } = quietLog();
    let abortedAfter = -1;
    const start = Date.now();
    const done = runUntilSignalled(
      {
        stop: (deadline) =>
          new Promise<void>((resolve) => {
            deadline.addEventListener('abort', () => {
              abortedAfter = Date.now() - start;
              resolve();
            });
          }),
      },
      { log, shutdownTimeoutMs: 100, signals },
    );
    signals.emit('SIGINT');
    expect(await done).toBe(0);
    expect(abortedAfter).toBeGreaterThanOrEqual(90);
  });
});
