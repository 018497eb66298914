// lib/backoff.ts `within`: waits for work, at most a given time.

import { describe, expect, it } from 'vitest';
import { within } from '../../lib/backoff.ts';

describe('within', () => {
  it('returns when the work settles, rejected or not, long before its time is up', async () => {
    const started = Date.now();
    await within(Promise.resolve(1), 10_000);
    await within(Promise.reject(new Error('no')), 10_000);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('returns at its time when the work never settles', async () => {
    const started = Date.now();
    await within(new Promise(() => undefined), 50);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });
});
