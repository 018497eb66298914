// Signature V4 against AWS's published test suite vector and round trips, without a network.

import { describe, expect, it } from 'vitest';
import { canonicalQuery, parseAuthorization, sign, signature, verify } from '../../lib/sigv4.ts';

describe('sigv4', () => {
  it('reproduces the get-vanilla vector of the AWS SigV4 test suite', () => {
    const sig = signature(
      { method: 'GET', path: '/', query: '', headers: { host: 'example.amazonaws.com', 'x-amz-date': '20150830T123600Z' } },
      { date: '20150830', region: 'us-east-1', service: 'service', signedHeaders: ['host', 'x-amz-date'] },
      '20150830T123600Z',
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
    );
    expect(sig).toBe('5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31');
  });

  it('sorts and encodes the query the way S3 does', () => {
    expect(canonicalQuery('prefix=a%20b/&list-type=2&delimiter=%2F&uploads')).toBe(
      'delimiter=%2F&list-type=2&prefix=a%20b%2F&uploads=',
    );
  });

  const now = Date.UTC(2026, 10, 23, 12, 0, 0);
  const creds = { accessKeyId: 'AK', secretAccessKey: 'SECRET' };
  const signed = () => {
    const headers = sign(
      { method: 'PUT', path: '/b/k%20ey', query: 'partNumber=1&uploadId=u', headers: { 'x-amz-meta-a': '1' }, host: 'gw:3128' },
      creds,
      'us-east-1',
      'UNSIGNED-PAYLOAD',
      now,
    );
    return { method: 'PUT', path: '/b/k%20ey', query: 'partNumber=1&uploadId=u', headers: headers as Record<string, string> };
  };

  it('verifies what it signed, and nothing changed', () => {
    const req = signed();
    const auth = parseAuthorization(req.headers.authorization)!;
    expect(verify(req, auth, 'SECRET', now, 60_000)).toEqual({ ok: true });
    expect(verify({ ...req, path: '/b/other' }, auth, 'SECRET', now, 60_000)).toEqual({ ok: false, why: 'mismatch' });
    expect(verify({ ...req, headers: { ...req.headers, 'x-amz-meta-a': '2' } }, auth, 'SECRET', now, 60_000).ok).toBe(false);
    expect(verify({ ...req, headers: { ...req.headers, 'x-amz-acl': 'public-read' } }, auth, 'SECRET', now, 60_000)).toEqual({
      ok: false,
      why: 'unsigned-header',
    });
    expect(verify(req, auth, 'SECRET', now + 16 * 60_000, 15 * 60_000)).toEqual({ ok: false, why: 'skewed' });
    expect(verify(req, auth, 'OTHER', now, 60_000)).toEqual({ ok: false, why: 'mismatch' });
  });
});
