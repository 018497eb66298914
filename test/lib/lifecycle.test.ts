import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
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

  it('a stop from outside (stopWhen) makes the next signal the first, and the one after it the second', async () => {
    const signals = new EventEmitter();
    const { log, lines } = quietLog();
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    try {
      let release: () => void = () => undefined;
      const done = runUntilSignalled(
        { stop: () => new Promise<void>((resolve) => (release = resolve)) },
        { log, shutdownTimeoutMs: 1000, signals, stopWhen: Promise.resolve('unmounted from outside') },
      );
      await new Promise((r) => setTimeout(r, 10));
      signals.emit('SIGTERM');
      expect(exit).not.toHaveBeenCalled();
      expect(lines.join('')).toContain('already stopping');
      signals.emit('SIGTERM');
      expect(exit).toHaveBeenCalledWith(130);
      release();
      expect(await done).toBe(0);
      expect(signals.listenerCount('SIGTERM')).toBe(0);
    } finally {
      exit.mockRestore();
    }
  });

  it('a second signal after a first exits at once', async () => {
    const signals = new EventEmitter();
    const { log } = quietLog();
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    try {
      let release: () => void = () => undefined;
      const done = runUntilSignalled({ stop: () => new Promise<void>((resolve) => (release = resolve)) }, { log, shutdownTimeoutMs: 1000, signals });
      signals.emit('SIGTERM');
      await new Promise((r) => setTimeout(r, 10));
      expect(exit).not.toHaveBeenCalled();
      signals.emit('SIGINT');
      expect(exit).toHaveBeenCalledWith(130);
      release();
      await done;
    } finally {
      exit.mockRestore();
    }
  });
});
