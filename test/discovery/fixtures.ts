// Shared pieces for discovery and agent tests: a silent logger that still records lines, sample
// heartbeats, and a registry filler.

import { Writable } from 'node:stream';
import { pino } from 'pino';
import { HEARTBEAT_EXTENSION_KEY, type Heartbeat } from '../../lib/heartbeat.ts';
import type { Logger } from '../../lib/log.ts';

export interface TestLog {
  readonly log: Logger;
  readonly lines: () => Record<string, unknown>[];
}

export function testLog(): TestLog {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l));
      cb();
    },
  });
  return { log: pino({ level: 'debug' }, stream), lines: () => lines };
}

export function heartbeat(over: Partial<Heartbeat> = {}, ext?: Record<string, unknown>): Heartbeat {
  return {
    uuid: 'cache-1',
    hostname: 'cache1.example.org',
    cache_port: 3128,
    cache_type: 'squid',
    max_load: 1000,
    upstream: 'both',
    timestamp: Date.now() / 1000,
    load: 10,
    public_ip: '130.87.1.1',
    ...over,
    ...(ext ? { [HEARTBEAT_EXTENSION_KEY]: { version: 1, cacheKind: 'squid', ...ext } } : {}),
  } as Heartbeat;
}
