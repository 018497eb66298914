// The registry across kill -9: a writer process is killed at random moments, and every
// transition it acknowledged is still there, every drone's record agrees with its last
// transition, and the next coordinator takes the dead one's lock over.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DroneRegistry } from '../../coordinator/registry.ts';
import { NODE, startChild } from '../helpers/process.ts';

const WRITER = new URL('./fixtures/registry-writer.ts', import.meta.url).pathname;

describe('drone registry', () => {
  it('keeps every acknowledged transition across kill -9, five times over', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'estuary-co-reg-'));
    for (let round = 0; round < 5; round++) {
      const child = startChild(NODE, [WRITER, dir, String(round * 100_000)]);
      await child.waitFor(/w-\d+ stopping\n/, 15_000);
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 200));
      child.proc.kill('SIGKILL');
      await child.exited;
      const acked = child.output().split('\n').filter(Boolean).map((l) => l.split(' ') as [string, string]);
      const registry = DroneRegistry.open(dir); // the dead writer's lock is taken over
      try {
        // The registry may be one step ahead of what was printed (killed between commit and
        // print), never behind.
        const order = ['requested', 'booting', 'integrating', 'available', 'draining', 'stopping', 'down'];
        for (const [id, state] of new Map(acked))
          expect(order.indexOf(registry.get(id)?.state ?? ''), id).toBeGreaterThanOrEqual(order.indexOf(state));
        for (const d of registry.all()) {
          const t = registry.transitions(d.id);
          expect(t[t.length - 1]!.to).toBe(d.state);
          expect(t.map((x) => x.to)).toEqual(['requested', 'booting', 'integrating', 'available', 'draining', 'stopping', 'down'].slice(0, t.length));
        }
      } finally {
        registry.close();
      }
    }
  }, 60_000);

  it('refuses a registry of another format without touching it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'estuary-co-reg-'));
    const { DatabaseSync } = await import('node:sqlite');
    const db = new DatabaseSync(join(dir, 'drones.sqlite'));
    db.exec("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO meta VALUES ('format', '99');");
    db.close();
    expect(() => DroneRegistry.open(dir)).toThrow(/has format 99, this estuary reads 1/);
    // The refusal released the lock: a later open with the right build would not be blocked.
    expect(() => DroneRegistry.open(dir)).toThrow(/has format 99/);
  });

  it('says which directory it cannot use', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'estuary-co-reg-')), 'a-file');
    writeFileSync(file, '');
    expect(() => DroneRegistry.open(join(file, 'state'))).toThrow(/cannot use state directory .*a-file\/state: .*ENOTDIR/);
  });
});
