import { describe, expect, it } from 'vitest';
import { connectionCap, parseSoftNofile } from '../../gateway/fd-limit.ts';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max open files            1024                 1048576              files
`;

describe('open-files limit against --max-connections', () => {
  it('reads the soft limit of /proc/self/limits', () => {
    expect(parseSoftNofile(LIMITS)).toBe(1024);
    expect(parseSoftNofile(LIMITS.replace('1024 ', 'unlimited'))).toBeUndefined();
    expect(parseSoftNofile('')).toBeUndefined();
  });

  it('caps connections at what the limit allows, never above --max-connections', () => {
    expect(connectionCap(10_000, 256)).toBe(64);
    expect(connectionCap(10_000, 1024)).toBe(320);
    expect(connectionCap(100, 1024)).toBe(100);
    expect(connectionCap(10_000, undefined)).toBe(10_000);
    expect(connectionCap(10_000, 10)).toBe(1);
  });
});
