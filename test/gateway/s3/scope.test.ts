// The pure name checks behind every scope decision, without a network.

import { describe, expect, it } from 'vitest';
import { hasDotSegment, prefixProblem, requestNameProblem, upstreamKey } from '../../../gateway/s3/scope.ts';

describe('dot segments', () => {
  it('finds them however a store might read the name', () => {
    for (const k of [
      '..', '.', 'run42/..', 'run42/../secret', 'run42/./x', '../x', 'a/..', // plain
      'run42/%2e%2e/secret', 'run42/%2E%2e/x', 'run42%2f..%2fx', // decoded once more
      'run42/%252e%252e/x', 'run42/%25252e%25252e/x', // a store decoding twice or three times
      'run42\\..\\secret', 'run42/..\\x', // backslash as a separator
      'run42/\u2024\u2024/x', 'run42/\uff0e\uff0e/x', 'run42\uff0f..\uff0fx', 'run42/\u2025/x', // NFKC lookalikes
      'run42/%ef%bc%8e%ef%bc%8e/x', // encoded lookalikes
      'run42/\uff052e\uff052e/x', 'run42/%25EF%25BC%258E%25EF%25BC%258E/x', // fullwidth %, lookalikes encoded twice
    ]) expect(hasDotSegment(k), k).toBe(true);
  });

  it('leaves names that only look like them', () => {
    for (const k of ['run42/a..b', 'run42/.hidden', 'run42/...', 'run42/..x/y', 'x.', 'run42/%zz/..a', '', 'run42/', 'a//b', 'x\u2024', 'run42/%2e%2e%2e']) {
      expect(hasDotSegment(k), k).toBe(false);
    }
  });

  it('stops decoding after a few rounds of hostile nesting', () => {
    const deep = `run42/${'%25'.repeat(50)}2e`;
    expect(hasDotSegment(deep)).toBe(false);
  });
});

describe('request names', () => {
  const params = (o: Record<string, string>) => new Map(Object.entries(o));

  it('checks the key, every listing parameter, the continuation token and the copy source', () => {
    expect(requestNameProblem('run42/x', params({}))).toBeUndefined();
    expect(requestNameProblem('run42/../x', params({}))).toMatch(/^key:/);
    for (const p of ['prefix', 'marker', 'start-after', 'key-marker', 'upload-id-marker', 'version-id-marker']) {
      expect(requestNameProblem('', params({ [p]: 'run42/../' })), p).toMatch(new RegExp(`^${p}:`));
    }
    const token = Buffer.from('run42/../secret').toString('base64');
    expect(requestNameProblem('', params({ 'continuation-token': token }))).toMatch(/^continuation-token:/);
    expect(requestNameProblem('run42/y', params({}), 'run42/%2e%2e/x')).toMatch(/^x-amz-copy-source:/);
    expect(requestNameProblem('run42/\0', params({}))).toMatch(/NUL/);
  });
});

describe('prefixes and the upstream key', () => {
  it('refuses prefixes a store could read as another', () => {
    expect(prefixProblem('run42/')).toBeUndefined();
    expect(prefixProblem('')).toBeUndefined();
    expect(prefixProblem('run42/../')).toBeDefined();
    expect(prefixProblem('a//b/')).toBeDefined();
  });

  it('encodes each segment once, canonically', () => {
    expect(upstreamKey('run42/a b+c.txt')).toBe('run42/a%20b%2Bc.txt');
    expect(upstreamKey('run42/%2e')).toBe('run42/%252e');
    expect(upstreamKey("a/(x)!*'~")).toBe('a/%28x%29%21%2A%27~');
  });
});
