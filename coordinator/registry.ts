// The drone registry: every drone and every transition, in one SQLite file (node:sqlite, no
// server). Writes are synchronous and durable (WAL with synchronous=FULL) before put() returns,
// so "persist, then act" holds across kill -9 and power loss. One coordinator per registry: a
// kernel record lock on `registry.lock` beside it (lib/dir-lock.ts), which dies with its holder
// however it dies and names no PID that another PID namespace or a reused PID could match.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { coordinatorErrors } from './errors.ts';
import type { Drone, DroneState, Reason } from './model.ts';
import { DirLocked, type DirLock, lockDirSync } from '../lib/dir-lock.ts';

/** Bump when the tables change; a registry of another format is refused, never rewritten. */
export const REGISTRY_FORMAT = 1;

export interface Transition {
  readonly seq: number;
  readonly droneId: string;
  readonly from: DroneState | null;
  readonly to: DroneState;
  readonly at: number;
  readonly reason: Reason;
}


const TABLES = `CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS drones (id TEXT PRIMARY KEY, state TEXT NOT NULL, body TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS transitions (seq INTEGER PRIMARY KEY AUTOINCREMENT, drone TEXT NOT NULL,
    from_state TEXT, to_state TEXT NOT NULL, at INTEGER NOT NULL, reason TEXT NOT NULL);
  CREATE INDEX IF NOT EXISTS transitions_by_drone ON transitions (drone, seq);`;

function createTables(db: DatabaseSync): void {
  db.exec(TABLES);
}

const isOurs = (err: unknown) => String((err as { code?: unknown }).code ?? '').startsWith('ESTUARY_');

export class DroneRegistry {
  private readonly db: DatabaseSync;
  private readonly lock: DirLock | undefined;
  private readonly cache = new Map<string, Drone>();
  // Prepared once: put() runs for every drone whose state or idle clock moved, each interval.
  private readonly upsert: StatementSync;
  private readonly record: StatementSync;
  private readonly begin: StatementSync;
  private readonly commit: StatementSync;

  private constructor(db: DatabaseSync, lock: DirLock | undefined) {
    this.db = db;
    this.lock = lock;
    this.upsert = db.prepare('INSERT INTO drones VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET state=excluded.state, body=excluded.body');
    this.record = db.prepare('INSERT INTO transitions (drone, from_state, to_state, at, reason) VALUES (?, ?, ?, ?, ?)');
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
    for (const row of db.prepare('SELECT body FROM drones').all() as { body: string }[]) {
      const d = JSON.parse(row.body) as Drone;
      this.cache.set(d.id, d);
    }
  }

  static open(stateDir: string): DroneRegistry {
    const path = join(stateDir, 'drones.sqlite');
    try {
      mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw coordinatorErrors.stateDir(stateDir, (err as Error).message);
    }
    let lock: DirLock;
    try {
      lock = lockDirSync(stateDir, 'registry');
    } catch (err) {
      if (err instanceof DirLocked) throw coordinatorErrors.registryLocked(path);
      throw coordinatorErrors.stateDir(stateDir, (err as Error).message);
    }
    let db: DatabaseSync;
    try {
      db = new DatabaseSync(path);
      db.exec('PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;');
      createTables(db);
      const row = db.prepare("SELECT value FROM meta WHERE key='format'").get() as { value: string } | undefined;
      if (!row) db.prepare("INSERT INTO meta VALUES ('format', ?)").run(String(REGISTRY_FORMAT));
      else if (Number(row.value) !== REGISTRY_FORMAT) {
        db.close();
        throw coordinatorErrors.registryVersion(path, Number(row.value), REGISTRY_FORMAT);
      }
    } catch (err) {
      lock.release();
      if (isOurs(err)) throw err;
      throw coordinatorErrors.stateDir(stateDir, (err as Error).message);
    }
    return new DroneRegistry(db, lock);
  }

  /**
   * A registry in memory (SQLite's :memory:): the same class, tables and statements, nothing
   * on disk and no lock. For the simulator, where durability across kill -9 has no meaning and
   * a durable write per drone per interval would be most of the run's time.
   */
  static inMemory(): DroneRegistry {
    const db = new DatabaseSync(':memory:');
    createTables(db);
    db.prepare("INSERT INTO meta VALUES ('format', ?)").run(String(REGISTRY_FORMAT));
    return new DroneRegistry(db, undefined);
  }

  /**
   * Why the last write failed (SQLite's words: "database or disk is full"), null once a write
   * succeeds. Nothing is acted on that could not be written, so while this is set the
   * coordinator starts and stops nothing; status, page and /metrics show it.
   */
  writeError: string | null = null;

  private written<T>(write: () => T): T {
    try {
      const r = write();
      this.writeError = null;
      return r;
    } catch (err) {
      this.writeError = (err as Error).message;
      throw err;
    }
  }

  /** Every drone ever recorded that is not down, plus down ones still in the table. */
  all(): Drone[] {
    return [...this.cache.values()];
  }

  get(id: string): Drone | undefined {
    return this.cache.get(id);
  }

  /** Next number for a drone name; never reused, so a node name never means two drones. */
  nextSerial(): number {
    return this.written(() => this.serial());
  }

  private serial(): number {
    const row = this.db.prepare("SELECT value FROM meta WHERE key='serial'").get() as { value: string } | undefined;
    const next = (row ? Number(row.value) : 0) + 1;
    this.db.prepare("INSERT INTO meta VALUES ('serial', ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value").run(String(next));
    return next;
  }

  /** Records the drone durably, with a transition row when its state changed. */
  put(drone: Drone, at: number): void {
    this.written(() => this.record1(drone, at));
  }

  private record1(drone: Drone, at: number): void {
    const before = this.cache.get(drone.id);
    this.begin.run();
    try {
      this.upsert.run(drone.id, drone.state, JSON.stringify(drone));
      if (!before || before.state !== drone.state)
        this.record.run(drone.id, before?.state ?? null, drone.state, at, JSON.stringify(drone.reason));
      this.commit.run();
    } catch (err) {
      this.db.exec('ROLLBACK');
      throw err;
    }
    this.cache.set(drone.id, drone);
  }

  transitions(droneId?: string, limit = 1000): Transition[] {
    const rows = (
      droneId
        ? this.db.prepare('SELECT * FROM transitions WHERE drone=? ORDER BY seq DESC LIMIT ?').all(droneId, limit)
        : this.db.prepare('SELECT * FROM transitions ORDER BY seq DESC LIMIT ?').all(limit)
    ) as { seq: number; drone: string; from_state: string | null; to_state: string; at: number; reason: string }[];
    return rows.reverse().map((r) => ({
      seq: r.seq,
      droneId: r.drone,
      from: r.from_state as DroneState | null,
      to: r.to_state as DroneState,
      at: r.at,
      reason: JSON.parse(r.reason) as Reason,
    }));
  }

  close(): void {
    this.db.close();
    this.lock?.release();
  }
}
