// Credentials the gateway issues: access keys, scopes and what they allow, without a network.

import { describe, expect, it } from 'vitest';
import { checkToken, issue, allowed, parseScope } from '../../../gateway/s3/credentials.ts';

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
