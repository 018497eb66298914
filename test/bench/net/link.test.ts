import { describe, expect, it } from 'vitest';
import { tbfArgs } from '../../../bench/net/link.ts';

describe('tbfArgs', () => {
  it('shapes to the rate with a bucket of at least one GSO segment', () => {
    expect(tbfArgs('eb1h', 1e6)).toEqual([
      'qdisc',
      'add',
      'dev',
      'eb1h',
      'root',
      'tbf',
      'rate',
      '1000000bit',
      'burst',
      '262144',
      'latency',
      '50ms',
    ]);
  });
  it('grows the bucket to 5 ms of traffic at high rates', () => {
    expect(tbfArgs('eb1h', 1e9)[9]).toBe(String((0.005 * 1e9) / 8));
  });
});
