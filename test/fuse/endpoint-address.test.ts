// What --endpoint may be (fuse/endpoint-address.ts): no port 0, no user name or password.

import { describe, expect, it } from 'vitest';
import { endpointUrl, maskUserinfo, userinfoError } from '../../fuse/endpoint-address.ts';
import { ValueError } from '../../lib/config/values.ts';

describe('the --endpoint value', () => {
  it('takes http:// and https:// URLs, with or without a port', () => {
    const parse = endpointUrl().parse;
    expect(parse('http://127.0.0.1:9000')).toBe('http://127.0.0.1:9000');
    expect(parse('https://s3.example.org/s3/')).toBe('https://s3.example.org/s3/');
    expect(parse('http://[::1]:80')).toBe('http://[::1]:80');
  });

  // The AWS SDK reads port 0 as "no port" and connects to 80 or 443 instead.
  it('refuses port 0, however written, and what is not an http(s) URL', () => {
    const parse = endpointUrl().parse;
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
