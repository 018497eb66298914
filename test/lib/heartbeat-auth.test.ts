import { describe, expect, it } from 'vitest';
import { KEY_ID_HEADER, parseHmacKey, SIGNATURE_HEADER, sign, verify } from '../../lib/heartbeat-auth.ts';

const shared = parseHmacKey('0123456789abcdef0123');
const kek = parseHmacKey('KEK=kek-secret-0123456789');
const keys = new Map([shared, kek].map((k) => [k.id, k]));
const body = Buffer.from('{"uuid":"a"}');

describe('HMAC over the exact body bytes', () => {
  it('parses shared and per-site keys, refuses short ones', () => {
    expect(shared.id).toBe('shared');
    expect(kek.id).toBe('KEK');
    expect(() => parseHmacKey('short')).toThrow(/16 characters/);
    expect(() => parseHmacKey('bad id!=0123456789abcdef')).toThrow(/key id/);
  });
  it('a signed body verifies with its key id', () => {
    expect(verify(body, sign(body, kek), keys)).toEqual({ state: 'signed', keyId: 'KEK' });
    expect(verify(body, sign(body, shared), keys)).toEqual({ state: 'signed', keyId: 'shared' });
  });
  it('headers arriving as Buffers (as amqplib may deliver them) verify too', () => {
    const h = Object.fromEntries(Object.entries(sign(body, kek)).map(([k, v]) => [k, Buffer.from(v)]));
    expect(verify(body, h, keys).state).toBe('signed');
  });
  it('one changed byte, a wrong key, an unknown key id and no signature are told apart', () => {
    const h = sign(body, kek);
    expect(verify(Buffer.from('{"uuid":"b"}'), h, keys).state).toBe('bad-signature');
    expect(verify(body, { ...h, [SIGNATURE_HEADER]: 'sha256=00' }, keys).state).toBe('bad-signature');
    expect(verify(body, { ...h, [SIGNATURE_HEADER]: 'md5=abc' }, keys).state).toBe('bad-signature');
    expect(verify(body, { ...h, [KEY_ID_HEADER]: 'CERN' }, keys).state).toBe('unknown-key');
    expect(verify(body, {}, keys).state).toBe('unsigned');
    expect(verify(body, undefined, keys).state).toBe('unsigned');
  });
});

describe('a signature header that is not text', () => {
  const key = parseHmacKey('shared-secret-0123456789');
  const keys = new Map([[key.id, key]]);
  const body = Buffer.from('{}');
  it.each([
    ['a number', 12345],
    ['a table', { a: 1 }],
    ['an array', ['sha256=00']],
    ['void', null],
    ['a boolean', true],
  ])('is a bad signature when it is %s, never "unsigned"', (_what, value) => {
    expect(verify(body, { [SIGNATURE_HEADER]: value }, keys).state).toBe('bad-signature');
  });
  it('a key id that is not text is a bad signature too', () => {
    const headers = { ...sign(body, key), [KEY_ID_HEADER]: 7 };
    expect(verify(body, headers, keys).state).toBe('bad-signature');
  });
  it('only an absent header means unsigned, whatever Object.prototype holds', () => {
    expect(verify(body, {}, keys).state).toBe('unsigned');
    expect(verify(body, JSON.parse('{"__proto__": {"x-estuary-signature": "sha256=00"}}'), keys).state).toBe(
      'unsigned',
    );
  });
});
