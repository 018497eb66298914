// Aborts of multipart uploads the mount gives up (a removed file whose parts had left, a failed
// close, a stream moved to a staging file). They run in the background, at most AT_ONCE at a
// time, so that clean-up nobody waits for never holds an rm or a close, nor takes the connections
// that stat, ls and open need. One the server does not take is tried again every 30 s for 10
// minutes; when the mount stops, every abort under way or waiting gets one last try within the
// shutdown deadline, and what is still not aborted is named in a warning, for
// --abort-uploads-after at a later start. An upload the server no longer knows (NoSuchUpload)
// counts as aborted.

import { within } from '../../lib/backoff.ts';
import { FS_LOG_CODES } from '../errors.ts';
import { type ObjectClient } from '../s3/object-client.ts';
import { uploadGone } from '../s3/s3-errors.ts';

interface Log {
  warn(o: object, msg: string): void;
}

/** Aborts in flight at once: the control connections are shared with every other request. */
const AT_ONCE = 2;

/**
 * Aborts upload `uploadId` of `key` (or the upload `uploadId` resolves to, once its id is known)
 * through `s.lateAborts` when there is one, in the background; else once, now. Never throws: an
 * upload's own error is what its writer hears.
 */
export async function abortUpload(
  s: { readonly client: ObjectClient; readonly lateAborts?: LateAborts },
  key: string,
  uploadId: string | Promise<string | undefined>,
): Promise<void> {
  if (s.lateAborts) {
    void s.lateAborts.abort(key, uploadId);
    return;
  }
  const id = await uploadId;
  if (id !== undefined) await s.client.abortMultipart(key, id).catch(() => undefined);
}

interface Upload {
  readonly key: string;
  /** Undefined while the upload's id is still to come (its CreateMultipartUpload under way). */
  uploadId: string | undefined;
  tries: number;
}

export class LateAborts {
  /** Aborts under way (a first try running, or an id still to come), to that first try. */
  private readonly running = new Map<Upload, Promise<void>>();
  /** Aborts that failed, waiting for the next round of tries. */
  private readonly waiting = new Set<Upload>();
  private timer: NodeJS.Timeout | undefined;
  private retrying = false;
  private stopped = false;
  private slots = AT_ONCE;
  private readonly queue: (() => void)[] = [];

  private readonly client: ObjectClient;
  private readonly log: Log;
  private readonly retryMs: number;
  private readonly tries: number;

  /** `retryMs` between rounds of tries, `tries` rounds before one is left to a later start. */
  constructor(client: ObjectClient, log: Log, retryMs = 30_000, tries = 20) {
    this.client = client;
    this.log = log;
    this.retryMs = retryMs;
    this.tries = tries;
  }

  /**
   * Aborts the upload now; when that fails, later. Resolves once this first try is over (callers
   * need not wait for it: it is tracked until the mount stops). Never throws.
   */
  abort(key: string, uploadId: string | Promise<string | undefined>): Promise<void> {
    const u: Upload = { key, uploadId: typeof uploadId === 'string' ? uploadId : undefined, tries: 0 };
    const first = (async () => {
      u.uploadId = await Promise.resolve(uploadId).catch(() => undefined);
      const done = u.uploadId === undefined || (await this.tryOnce(u));
      this.running.delete(u);
      if (!done) this.later(u);
    })();
    this.running.set(u, first);
    return first;
  }

  /** How many aborts are under way or wait for another try. */
  get size(): number {
    return this.running.size + this.waiting.size;
  }

  /**
   * When the mount stops: the tries under way end, then one last try of each that waits, all
   * within `withinMs`; what is still not aborted then is named in a warning.
   */
  async drain(withinMs = 30_000): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    const last = (async () => {
      await Promise.allSettled(this.running.values());
      await Promise.all(
        [...this.waiting].map(async (u) => {
          if (await this.tryOnce(u)) this.waiting.delete(u);
        }),
      );
    })();
    await within(last, withinMs);
    for (const u of [...this.running.keys(), ...this.waiting]) this.leave(u);
    this.running.clear();
    this.waiting.clear();
  }

  private async tryOnce(u: Upload): Promise<boolean> {
    if (this.slots === 0) await new Promise<void>((r) => this.queue.push(r));
    else this.slots--;
    try {
      await this.client.abortMultipart(u.key, u.uploadId!);
      return true;
    } catch (err) {
      return uploadGone(err);
    } finally {
      const next = this.queue.shift();
      if (next) next();
      else this.slots++;
    }
  }

  private later(u: Upload): void {
    // Failed after the mount stopped (drain no longer looks): left now, with its warning.
    if (this.stopped) return this.leave(u);
    this.waiting.add(u);
    // One chain of rounds: a round under way schedules the next itself.
    if (!this.retrying) this.timer ??= setTimeout(() => void this.retry(), this.retryMs).unref();
  }

  private async retry(): Promise<void> {
    this.timer = undefined;
    this.retrying = true;
    try {
      await Promise.all(
        [...this.waiting].map(async (u) => {
          if (await this.tryOnce(u)) this.waiting.delete(u);
          else if (++u.tries >= this.tries) {
            this.waiting.delete(u);
            this.leave(u);
          }
        }),
      );
    } finally {
      this.retrying = false;
    }
    if (this.waiting.size > 0 && !this.stopped) this.timer ??= setTimeout(() => void this.retry(), this.retryMs).unref();
  }

  private leave(u: Upload): void {
    this.log.warn(
      { key: u.key, uploadId: u.uploadId, code: FS_LOG_CODES.uploadLeft },
      'an unfinished multipart upload could not be aborted; a mount started with --abort-uploads-after aborts it once it is that old',
    );
  }
}
