// Multipart uploads whose abort failed: a server down or slow at that moment (an rm during an
// outage drops a stream that had sent parts). Each is tried again later, and once more when the
// mount stops, so its parts are not left stored, and billed, until --abort-uploads-after finds
// them at a later start. An upload the server no longer knows counts as aborted.

import { isObjectError, type ObjectClient } from '../s3/object-client.ts';

interface Log {
  warn(o: object, msg: string): void;
}

/**
 * Aborts upload `uploadId` of `key` through `s.lateAborts` when there is one (tried again later
 * if it fails), else once. Never throws: an upload's own error is what its writer hears.
 */
export async function abortUpload(
  s: { readonly client: ObjectClient; readonly lateAborts?: LateAborts },
  key: string,
  uploadId: string,
): Promise<void> {
  if (s.lateAborts) await s.lateAborts.abort(key, uploadId);
  else await s.client.abortMultipart(key, uploadId).catch(() => undefined);
}

export class LateAborts {
  private readonly pending = new Map<string, { key: string; uploadId: string; tries: number }>();
  private timer: NodeJS.Timeout | undefined;

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

  /** Aborts upload `uploadId` of `key` now; when that fails, later. Never throws. */
  async abort(key: string, uploadId: string): Promise<void> {
    if (!(await this.tryOnce(key, uploadId))) this.later(key, uploadId);
  }

  /** How many aborts wait for another try. */
  get size(): number {
    return this.pending.size;
  }

  /** One last try of each, when the mount stops; what still fails is logged for the next start. */
  async drain(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const [id, p] of [...this.pending]) {
      this.pending.delete(id);
      if (!(await this.tryOnce(p.key, p.uploadId))) this.leave(p.key, p.uploadId);
    }
  }

  private async tryOnce(key: string, uploadId: string): Promise<boolean> {
    try {
      await this.client.abortMultipart(key, uploadId);
      return true;
    } catch (err) {
      return isObjectError(err, 'not-found');
    }
  }

  private later(key: string, uploadId: string): void {
    const p = this.pending.get(uploadId) ?? { key, uploadId, tries: 0 };
    this.pending.set(uploadId, p);
    this.timer ??= setTimeout(() => void this.retry(), this.retryMs).unref();
  }

  private async retry(): Promise<void> {
    this.timer = undefined;
    for (const [id, p] of [...this.pending]) {
      if (await this.tryOnce(p.key, p.uploadId)) this.pending.delete(id);
      else if (++p.tries >= this.tries) {
        this.pending.delete(id);
        this.leave(p.key, p.uploadId);
      }
    }
    if (this.pending.size > 0) this.timer = setTimeout(() => void this.retry(), this.retryMs).unref();
  }

  private leave(key: string, uploadId: string): void {
    this.log.warn(
      { key, uploadId },
      'an unfinished multipart upload could not be aborted; a mount started with --abort-uploads-after aborts it once it is that old',
    );
  }
}
