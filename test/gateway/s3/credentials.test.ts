// Session-token claims are checked for shape, not only for their MAC: a token whose expiry is no
// finite number would otherwise never expire (NaN and strings compare false with the clock).

import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkToken, issue } from '../../../gateway/s3/credentials.ts';

const KEY = 'unit-issuer-key-0123456789abcdef0123456789';

/** A token with these claims, MAC'd under KEY exactly as issue() does it. */
function forged(claimsJson: string): string {
  const payload = Buffer.from(claimsJson).toString('base64url');
  return `est1.${payload}.${createHmac('sha256', KEY).update(`token\n${payload}`, 'utf8').digest('base64url')}`;
}

describe('session token claims', () => {
  it('accepts what issue() makes', () => {
    const c = issue(KEY, [{ bucket: 'kek-data', prefix: 'run42/', write: false }], 60_000, Date.now());
    expect(checkToken(KEY, c.sessionToken, c.accessKeyId, Date.now()).ok).toBe(true);
  });

  it('refuses an expiry or scopes that are not what they claim to be', () => {
    const scopes = '[{"bucket":"kek-data","prefix":"","write":true}]';
    for (const exp of ['"never"', 'null', '1e400', '[9999999999]', '{}', '"9999999999"']) {
      const t = forged(`{"accessKeyId":"ESTUX","iat":0,"exp":${exp},"scopes":${scopes}}`);
      expect(checkToken(KEY, t, 'ESTUX', Date.now()), exp).toEqual({ ok: false, why: 'invalid' });
    }
    for (const bad of ['null', '{"bucket":"kek-data"}', '[{"bucket":"kek-data","prefix":1,"write":true}]', '"all"']) {
      const t = forged(`{"accessKeyId":"ESTUX","iat":0,"exp":9999999999,"scopes":${bad}}`);
      expect(checkToken(KEY, t, 'ESTUX', Date.now()), bad).toEqual({ ok: false, why: 'invalid' });
    }
    expect(checkToken(KEY, forged('null'), 'ESTUX', Date.now())).toEqual({ ok: false, why: 'invalid' });
  });
});
