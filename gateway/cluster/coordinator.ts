// The worker side of a multi-worker gateway: claims keys from the primary, publishes the fills it
// leads, mirrors the fills other workers lead into local Fill objects (so the unchanged readers
// stream them from the other worker's temporary file), and applies replicated index changes.

import { type FileHandle, unlink } from 'node:fs/promises';
import { openEntryFile } from '../cache/disk-files.ts';
import type { Cache, Coordinator } from '../cache/cache.ts';
import type { Fill, FillEvent } from '../cache/fill.ts';
import { recordWrites } from '../cache/write-marks.ts';
import { forgetHeaders } from '../proxy/heads.ts';
import { UpstreamFailure } from '../upstream.ts';
import { GATHER_WAIT_MS } from './gather.ts';
import { type GatewayView, INVALIDATE_PRIMARY_WAIT_MS, isToWorker, type ToPrimary, type ToWorker } from './messages.ts';

/** Progress goes to followers at most every 256 KiB: a message per body chunk would cost more than it helps. */
const PROGRESS_STEP = 256 * 1024;
/** ...or at least every second while bytes arrive, so a slow fill never looks silent to followers. */
const PROGRESS_EVERY_MS = 1000;
/** A page or scrape waits this long for the primary, which itself waits GATHER_WAIT_MS for the workers. */
const VIEW_DEADLINE_MS = GATHER_WAIT_MS + 5000;

export interface CoordinatorLimits {
  /**
   * A claim the primary has not answered in this time is taken as this worker's own: it fetches
   * by itself rather than let its clients wait on a message that may never come.
   */
  readonly claimDeadlineMs: number;
  /**
   * A followed fill that has said nothing for this long (longer than the upstream may stay
   * silent) is given up: its readers fetch for themselves, and the gateway says so in its log.
   */
  readonly followSilenceMs: number;
  readonly onStall?: (what: 'claim' | 'follow' | 'invalidate', key: string) => void;
}

interface Follow {
  readonly name: string;
  readonly fill: Fill;
  /** Fires when the leader has been silent for followSilenceMs. */
  watchdog?: NodeJS.Timeout;
  /** Events are applied one after another; opening a file is asynchronous. */
  chain: Promise<void>;
  opened: boolean;
  written: number;
}

export class WorkerCoordinator implements Coordinator {
  readonly #cache: Cache;
  readonly #send: (m: ToPrimary) => void;
  readonly #claims = new Map<number, (m: Extract<ToWorker, { t: 'claimed' }>) => void>();
  /**
   * Fills led by other workers that this one follows, by the name the primary gave them. One
   * name can have several local fills: an invalidation relayed from an older write takes the
   * first out of this worker's table while the primary still lets new requests join the fill
   * (a write's claim came after it), so the next request here joins the same fill again.
   */
  readonly #follows = new Map<string, Follow[]>();
  /** This worker's invalidations the primary has not confirmed yet, by id. */
  readonly #unconfirmed = new Map<
    number,
    { readonly keys: ReadonlySet<string>; readonly confirmed: () => void; readonly progressed: () => void }
  >();
  readonly #views = new Map<number, (view: GatewayView) => void>();
  /** Invalidations from the primary whose last part has not come yet: the files being removed. */
  readonly #dropping = new Map<number, Promise<void>>();
  readonly #limits: CoordinatorLimits;
  #nextId = 1;

  constructor(cache: Cache, send: (m: ToPrimary) => void, limits: CoordinatorLimits) {
    this.#cache = cache;
    this.#send = send;
    this.#limits = limits;
    cache.disk.onEvict = (key, path) => send({ t: 'evicted', key, path });
  }

  /**
   * Asks the primary who fetches `fill.key`, and wires the fill for the answer as soon as it
   * arrives: node emits each IPC message on process.nextTick, ahead of promise continuations, so
   * the leader's next events (even its final one) can be handled in the same tick as `claimed`.
   * A follow registered by the caller after `await` would miss them and wait for the guard.
   */
  claim(fill: Fill): Promise<'leader' | 'join'> {
    const id = this.#nextId++;
    return new Promise((resolve) => {
      const deadline = setTimeout(() => {
        // A late answer finds nothing to resolve. Leading here is safe even if the primary made
        // us a follower: it ignores our events, and the events it relays find no follow here.
        this.#claims.delete(id);
        this.#limits.onStall?.('claim', fill.key);
        this.lead(fill, id);
        resolve('leader');
      }, this.#limits.claimDeadlineMs);
      deadline.unref();
      this.#claims.set(id, (m) => {
        clearTimeout(deadline);
        if (m.role === 'join') this.follow(fill, m);
        else this.lead(fill, id);
        resolve(m.role);
      });
      this.#send({ t: 'claim', id, key: fill.key });
    });
  }

  /** `id`: the claim that made this worker the leader; the primary knows the fill by it. */
  lead(fill: Fill, id: number): void {
    let sent = 0;
    let sentAt = Date.now();
    fill.observer = (ev: FillEvent) => {
      if (ev.type === 'progress') {
        if (ev.written - sent < PROGRESS_STEP && Date.now() - sentAt < PROGRESS_EVERY_MS) return;
        sent = ev.written;
        sentAt = Date.now();
      }
      this.#send({ t: 'fill', id, key: fill.key, ev });
    };
  }

  follow(fill: Fill, snapshot: unknown): void {
    const snap = snapshot as Extract<ToWorker, { t: 'claimed' }> | undefined;
    const f: Follow = { name: snap?.fill ?? fill.key, fill, chain: Promise.resolve(), opened: false, written: 0 };
    const same = this.#follows.get(f.name);
    if (same) same.push(f);
    else this.#follows.set(f.name, [f]);
    this.#watch(f);
    if (snap?.streaming) this.#apply(f, snap.streaming);
    if (snap?.written) this.#apply(f, { type: 'progress', written: snap.written });
  }

  /**
   * Tells every other worker to drop `keys` and resolves once the primary confirms they did. If
   * it says nothing for too long (stuck, or stopped), the write is recorded on disk so no index
   * scan takes the replaced version back, and the caller goes on: a write is not held for ever.
   * Word that a long invalidation progresses (a worker finished a part) restarts that wait.
   */
  invalidated(keys: readonly string[]): Promise<void> {
    const id = this.#nextId++;
    const at = Date.now();
    return new Promise((resolve) => {
      let late: NodeJS.Timeout | undefined;
      const arm = () => {
        clearTimeout(late);
        late = setTimeout(() => {
          late = undefined;
          this.#limits.onStall?.('invalidate', keys[0]!);
          recordWrites(this.#cache.disk.root, keys, at)
            .catch(() => undefined)
            .finally(resolve);
        }, INVALIDATE_PRIMARY_WAIT_MS);
        late.unref();
      };
      arm();
      // Kept after the deadline, so a stored version relayed until the answer is still refused.
      this.#unconfirmed.set(id, {
        keys: new Set(keys),
        confirmed: () => {
          clearTimeout(late);
          resolve();
        },
        // Once the guard fired the write is answered: later word changes nothing.
        progressed: () => {
          if (late) arm();
        },
      });
      this.#send({ t: 'invalidate', id, keys });
    });
  }

  /** Whether an invalidation of `key` by this worker awaits the primary's confirmation. */
  #invalidating(key: string): boolean {
    for (const u of this.#unconfirmed.values()) if (u.keys.has(key)) return true;
    return false;
  }

  /** The whole gateway's numbers, gathered by the primary; a primary that does not answer is named. */
  view(): Promise<GatewayView> {
    const id = this.#nextId++;
    return new Promise((resolve) => {
      const deadline = setTimeout(() => {
        this.#views.delete(id);
        const missing = [`the primary did not answer within ${VIEW_DEADLINE_MS / 1000} s`];
        resolve({ text: '', missing, errors: [], down: [], diskFull: false });
      }, VIEW_DEADLINE_MS);
      deadline.unref();
      this.#views.set(id, (view) => {
        clearTimeout(deadline);
        resolve(view);
      });
      this.#send({ t: 'metrics', id });
    });
  }

  onMessage(m: unknown): void {
    if (!isToWorker(m)) return;
    switch (m.t) {
      case 'claimed': {
        const resolve = this.#claims.get(m.id);
        this.#claims.delete(m.id);
        resolve?.(m);
        return;
      }
      case 'fill': {
        for (const f of this.#follows.get(m.fill) ?? []) this.#apply(f, m.ev);
        return;
      }
      case 'put':
        // The primary relays a stored version before it hears of a write of ours that overtook
        // its fill; until it confirms our invalidation, what it relays for the key may be old.
        if (this.#invalidating(m.meta.key)) return;
        this.#cache.disk.adopt({ meta: m.meta, path: m.path });
        return;
      case 'meta': {
        this.#cache.disk.replaceMeta(m.meta);
        const mem = this.#cache.memory.get(m.meta.key);
        if (mem) {
          forgetHeaders(mem.meta);
          this.#cache.memory.set({ meta: m.meta, body: mem.body });
        }
        return;
      }
      case 'invalidate': {
        // Confirmed once the files are gone too: a kill -9 right after must not leave them to be indexed.
        const files: (Promise<unknown> | undefined)[] = [this.#dropping.get(m.id)];
        for (const key of m.keys) {
          const entry = this.#cache.disk.peek(key);
          // Forgotten first, so the index does not unlink the file a second time on its own.
          if (entry) this.#cache.disk.forget(key, entry.path);
          this.#cache.invalidateHere(key);
          if (entry) files.push(unlink(entry.path).catch(() => undefined));
        }
        const id = m.id;
        // A long invalidation comes in parts (messages.ts invalidationParts): each part done is
        // reported (the primary then knows this worker is alive), and the answer follows the last.
        const done = Promise.all(files).then(() => undefined);
        if (m.more) {
          this.#dropping.set(id, done);
          void done.then(() => this.#send({ t: 'invalidated', id, more: true }));
        } else {
          this.#dropping.delete(id);
          void done.then(() => this.#send({ t: 'invalidated', id }));
        }
        return;
      }
      case 'invalidated': {
        const u = this.#unconfirmed.get(m.id);
        if (m.more) return u?.progressed();
        this.#unconfirmed.delete(m.id);
        u?.confirmed();
        return;
      }
      case 'evicted':
        this.#cache.disk.forget(m.key, m.path);
        this.#cache.memory.delete(m.key);
        return;
      case 'metrics':
        this.#views.get(m.id)?.(m.view);
        this.#views.delete(m.id);
        return;
      default:
    }
  }

  /** (Re)arms the follow's watchdog: every event from the leader proves it is alive. */
  #watch(f: Follow): void {
    clearTimeout(f.watchdog);
    f.watchdog = setTimeout(() => {
      if (!this.#follows.get(f.name)?.includes(f)) return;
      this.#limits.onStall?.('follow', f.fill.key);
      this.#end(f, () =>
        f.fill.finish(
          'failed',
          new UpstreamFailure('proxy_internal_error', 502, 'the worker fetching this went silent', true),
        ),
      );
    }, this.#limits.followSilenceMs);
    f.watchdog.unref();
  }

  #apply(f: Follow, ev: FillEvent): void {
    this.#watch(f);
    f.chain = f.chain
      .then(() => this.#step(f, ev))
      .catch(() => {
        this.#end(f, () =>
          f.fill.finish('failed', new UpstreamFailure('proxy_internal_error', 502, 'lost the fill')),
        );
      });
  }

  async #step(f: Follow, ev: FillEvent): Promise<void> {
    const fill = f.fill;
    switch (ev.type) {
      case 'streaming': {
        const fh = await openEntryFile(ev.tempPath).then((o) => o.fh, () => undefined);
        // Already renamed into place: the 'done' event will open the final file instead.
        if (!fh) return;
        fill.startStreaming(ev.meta, ev.length, fh, ev.tempPath);
        f.opened = true;
        return;
      }
      case 'progress':
        f.written = ev.written;
        if (f.opened && ev.written > fill.written) fill.progress(ev.written - fill.written);
        return;
      case 'done': {
        if (!f.opened) {
          const fh: FileHandle | undefined = await openEntryFile(ev.path).then((o) => o.fh, () => undefined);
          if (!fh) {
            // The file is gone already: a write overtook the fill and dropped it, or a newer
            // version replaced it. Nothing reached the readers yet, so they fetch for themselves.
            this.#end(f, () =>
              fill.finish('failed', new UpstreamFailure('proxy_internal_error', 502, 'the followed fill was dropped', true)),
            );
            return;
          }
          fill.startStreaming(ev.meta, ev.meta.size, fh, ev.path);
          f.opened = true;
        }
        if (ev.meta.size > fill.written) fill.progress(ev.meta.size - fill.written);
        fill.meta = ev.meta;
        fill.path = ev.path;
        fill.stored = ev.stored;
        this.#end(f, () => fill.finish('done'));
        return;
      }
      case 'revalidated':
        fill.meta = ev.meta;
        this.#end(f, () => fill.finish('revalidated'));
        return;
      case 'pass':
        this.#end(f, () => fill.finish('pass'));
        return;
      case 'failed':
        this.#end(f, () =>
          fill.finish('failed', new UpstreamFailure(ev.proxyError, ev.status, ev.message, ev.passable)),
        );
        return;
      default:
    }
  }

  #end(f: Follow, finish: () => void): void {
    clearTimeout(f.watchdog);
    const same = this.#follows.get(f.name);
    const i = same?.indexOf(f) ?? -1;
    if (i >= 0) same!.splice(i, 1);
    if (same?.length === 0) this.#follows.delete(f.name);
    finish();
    this.#cache.endFill(f.fill);
  }
}
