// Cache keys: a purge names an object in any spelling of its URL that names the same object.

import { describe, expect, it } from 'vitest';
import { purgeSpelling, rawForwardKey, splitAbsolute, targetPath } from '../../../gateway/cache/key.ts';

/** The key a forward-proxy request for `url` stores its object under (as proxy/target.ts makes it). */
function keyOfRequest(url: string): string {
  const abs = splitAbsolute(url)!;
  return rawForwardKey(abs.origin, targetPath(abs.rest));
}

describe('purgeSpelling', () => {
  it('gives an absolute http URL the key a request for it is stored under', () => {
    for (const url of ['http://LOCALHOST:8080/a', 'HTTP://localhost:8080/a', 'http://Example.ORG:80/x?Q=1', 'http://example.org', 'http://example.org?q']) {
      expect(purgeSpelling(url, false)).toBe(keyOfRequest(url));
    }
    expect(purgeSpelling('http://Example.ORG:80/x?Q=1', false)).toBe('http://example.org/x?Q=1');
    expect(purgeSpelling('http://[::1]:80/a', false)).toBe('http://[::1]/a');
  });

  it('keeps the path and query as given (the proxy forwards and keys them as sent)', () => {
    expect(purgeSpelling('http://h/A/./b/../%7e?X=%41', false)).toBe('http://h/A/./b/../%7e?X=%41');
  });

  it('keeps an empty prefix path empty, so a prefix names every path of the origin', () => {
    expect(purgeSpelling('http://H:81', true)).toBe('http://h:81');
    expect(purgeSpelling('http://H:80/dir/', true)).toBe('http://h/dir/');
  });

  it('leaves keys of other kinds, and what does not parse, as given', () => {
    for (const v of ['s3://Bucket/Key', 'cvmfs://atlas.cern.ch', 'reverse://ring/p', 'https://H/a', 'http://u:p@H/a', 'http://[bad/a', 'not a url']) {
      expect(purgeSpelling(v, false)).toBe(v);
    }
  });
});
