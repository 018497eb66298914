// Signature V4 against AWS's published test suite vector and round trips, without a network.

import { describe, expect, it } from 'vitest';
import { checkToken, issue, allowed, parseScope } from '../../../gateway/s3/credentials.ts';
import { canonicalQuery, parseAuthorization, sign, signature, verify } from '../../../gateway/s3/sigv4.ts';

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

describe('issued credentials', () => {
  const key = 'k'.repeat(32);
  it('carry their scopes and expiry, and only the issuer key checks them', () => {
    const c = issue(key, [{ bucket: 'kek-data', prefix: 'run42/', write: false }], 60_000, 1_000_000);
    const ok = checkToken(key, c.sessionToken, c.accessKeyId, 1_030_000);
    expect(ok.ok && ok.secret).toBe(c.secretAccessKey);
    expect(checkToken(key, c.sessionToken, c.accessKeyId, 1_061_000)).toEqual({ ok: false, why: 'expired' });
    expect(checkToken('x'.repeat(32), c.sessionToken, c.accessKeyId, 1_030_000)).toEqual({ ok: false, why: 'invalid' });
    expect(checkToken(key, c.sessionToken, 'ESTUOTHER', 1_030_000)).toEqual({ ok: false, why: 'wrong-key' });
    const [p, claims, mac] = c.sessionToken.split('.');
    const widened = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(claims!, 'base64url').toString()), exp: 9e9 })).toString('base64url');
    expect(checkToken(key, `${p}.${widened}.${mac}`, c.accessKeyId, 1_030_000)).toEqual({ ok: false, why: 'invalid' });
  });

  it('allow exactly their scopes', () => {
    const scopes = [parseScope('kek-data/run42/', false)!, parseScope('results/run42/', true)!];
    expect(allowed(scopes, { bucket: 'kek-data', key: 'run42/x', write: false })).toBe(true);
    expect(allowed(scopes, { bucket: 'kek-data', key: 'run42/x', write: true })).toBe(false);
    expect(allowed(scopes, { bucket: 'kek-data', key: 'run4', write: false })).toBe(false);
    expect(allowed(scopes, { bucket: 'results', key: 'run42/out', write: true })).toBe(true);
    expect(parseScope('Bad_Bucket/x', false)).toBeUndefined();
  });
});
