// Wraps an ObjectClient and fails chosen calls, to test that every failure of the store reaches
// the writer or reader as an error and never as silent loss. Rules match an operation (and
// optionally a key) and fire a given number of times, or until removed.

import { ObjectError, type ObjectErrorKind } from './object-client.ts';
import { type Operation, WrappingClient } from './wrapping-client.ts';

export type { Operation };

export interface FaultRule {
  readonly op: Operation | '*';
  readonly key?: string | RegExp;
  readonly kind: ObjectErrorKind;
  /** How many calls fail; Infinity until cleared. */
  times: number;
  /** Holds the call this long before failing (or before passing when `kind` is never reached). */
  readonly delayMs?: number;
}

export class FaultInjectingClient extends WrappingClient {
  private rules: FaultRule[] = [];
  /** Every call made, in order, for assertions. */
  readonly log: { op: Operation; key: string }[] = [];

  fail(op: Operation | '*', kind: ObjectErrorKind = 'unavailable', times = 1, key?: string | RegExp): void {
    this.rules.push({ op, kind, times, key });
  }

  clear(): void {
    this.rules = [];
  }

  protected async before(op: Operation, key: string): Promise<void> {
    this.log.push({ op, key });
    const rule = this.rules.find(
      (r) =>
        r.times > 0 &&
        (r.op === '*' || r.op === op) &&
        (r.key === undefined || (typeof r.key === 'string' ? r.key === key : r.key.test(key))),
    );
    if (!rule) return;
    rule.times -= 1;
    if (rule.delayMs) await new Promise((r) => setTimeout(r, rule.delayMs));
    throw new ObjectError(rule.kind, `injected ${rule.kind} on ${op} ${key}`, key);
  }
}
