// Which dropped heartbeats get a log line. Throttled per cache (uuid, hostname and AMQP sender)
// and reason, not per reason alone: with one line per reason, one misconfigured agent among thousands of healthy
// ones hid behind whichever bad message came first. A global cap per window keeps a flood of
// made-up uuids from flooding the log; what it holds back is counted in the next line. Pure.

/** Who a dropped message says it came from, as far as it could be read. */
export interface DropSource {
  readonly uuid?: string;
  readonly hostname?: string;
  readonly sender?: string;
}

export const DROP_LOG_EVERY_MS = 10_000;
/** Lines per window over all caches: enough to name every bad agent of a large site at once. */
export const DROP_LOG_MAX_LINES = 50;
/** Caches remembered between windows; past this the memory is cleared (at worst, a repeat line). */
const MAX_SOURCES = 10_000;

export class DropLog {
  readonly #last = new Map<string, { at: number; suppressed: number }>();
  #windowStart = Number.NEGATIVE_INFINITY;
  #linesInWindow = 0;
  #heldBack = 0;

  /** The fields to log for this drop, or undefined when it is held back. */
  admit(src: DropSource, reason: string, t: number): { suppressedSinceLast: number; heldBackOverall: number } | undefined {
    const key = `${reason}\u0000${src.uuid ?? '-'}\u0000${src.hostname ?? '-'}\u0000${src.sender ?? '-'}`;
    const last = this.#last.get(key);
    if (last && t - last.at < DROP_LOG_EVERY_MS) {
      last.suppressed++;
      return undefined;
    }
    if (t - this.#windowStart >= DROP_LOG_EVERY_MS) {
      this.#windowStart = t;
      this.#linesInWindow = 0;
    }
    if (this.#linesInWindow >= DROP_LOG_MAX_LINES) {
      this.#heldBack++;
      return undefined;
    }
    this.#linesInWindow++;
    if (this.#last.size >= MAX_SOURCES) this.#last.clear();
    this.#last.set(key, { at: t, suppressed: 0 });
    const out = { suppressedSinceLast: last?.suppressed ?? 0, heldBackOverall: this.#heldBack };
    this.#heldBack = 0;
    return out;
  }
}

/** uuid and hostname from a message that failed before or during parsing, if they can be read. */
export function peekSource(body: Uint8Array): Pick<DropSource, 'uuid' | 'hostname'> {
  if (body.length > 64 * 1024) return {};
  try {
    const data: unknown = JSON.parse(Buffer.from(body).toString('utf8'));
    if (data === null || typeof data !== 'object') return {};
    const text = (v: unknown) => (typeof v === 'string' ? v.slice(0, 128) : undefined);
    const d = data as Record<string, unknown>;
    return {
      ...(text(d.uuid) !== undefined ? { uuid: text(d.uuid) } : {}),
      ...(text(d.hostname) !== undefined ? { hostname: text(d.hostname) } : {}),
    };
  } catch {
    return {};
  }
}
