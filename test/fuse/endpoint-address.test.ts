// What --endpoint (and every URL option) may be: no port 0 (lib/config/values.ts); for the
// mount's endpoint no user name or password either (fuse/endpoint-address.ts).

import { describe, expect, it } from 'vitest';
import { maskUserinfo, userinfoError } from '../../fuse/endpoint-address.ts';
import { url, ValueError } from '../../lib/config/values.ts';

describe('the --endpoint value (a URL option)', () => {
  it('takes http:// and https:// URLs, with or without a port', () => {
    const u = url();
    const parse = (v: string) => u.parse(v);
    expect(parse('http://127.0.0.1:9000')).toBe('http://127.0.0.1:9000');
    expect(parse('https://s3.example.org/s3/')).toBe('https://s3.example.org/s3/');
    expect(parse('http://[::1]:80')).toBe('http://[::1]:80');
  });

  // The AWS SDK reads port 0 as "no port" and connects to 80 or 443 instead.
  it('refuses port 0, however written, and what is not an http(s) URL', () => {
    const u = url();
    const parse = (v: string) => u.parse(v);
    for (const bad of ['http://127.0.0.1:0', 'https://h:00/', 'http://[::1]:0', 'http://h:65536', 'ftp://h', 'h:9000']) {
      expect(() => parse(bad), bad).toThrow(ValueError);
    }
    expect(() => parse('http://h:0')).toThrow(/port from 1 to 65535/);
  });

  it('refuses a user name or password in one line that does not show them', () => {
    expect(userinfoError('http://127.0.0.1:9000')).toBeUndefined();
    const err = userinfoError('http://alice:s3cr3t-pw@127.0.0.1:9000/s3');
    expect(err?.code).toBe('ESTUARY_FS_ENDPOINT_USERINFO');
    expect(err?.exitCode).toBe(2);
    expect(err?.message).toContain('http://***@127.0.0.1:9000/s3');
    expect(err?.message).not.toMatch(/alice|s3cr3t/);
    expect(userinfoError('https://bob@h')?.message).not.toContain('bob');
    expect(maskUserinfo('http://a:p@ss@h/x@y')).toBe('http://***@h/x@y');
  });
});
