import { describe, expect, it } from 'vitest';
import { normaliseField, selectionMatches, variantKey, varySelection } from '../../../gateway/cache/vary.ts';

describe('Vary normalisation', () => {
  it('folds Accept-Encoding to its set of acceptable codings', () => {
    expect(normaliseField('accept-encoding', 'gzip, deflate, br')).toBe('br,deflate,gzip');
    expect(normaliseField('accept-encoding', ['BR;q=0.5', 'x-gzip'])).toBe('br,gzip');
    expect(normaliseField('accept-encoding', 'gzip, zstd;q=0, identity;q=0')).toBe('gzip,identity;q=0');
    expect(normaliseField('accept-encoding', undefined)).toBe('');
  });
  it('folds case and white space in Accept-*, only white space elsewhere', () => {
    expect(normaliseField('accept-language', 'EN-gb , en; q=0.8')).toBe('en-gb,en;q=0.8');
    expect(normaliseField('accept', 'Text/HTML,  */*;q=0.1')).toBe('text/html,*/*;q=0.1');
    expect(normaliseField('x-token', ' Abc  D ')).toBe('Abc D');
  });
  it('matches stored selections, raw ones from older entries too', () => {
    const sel = varySelection('Accept-Encoding, X-Token', { 'accept-encoding': 'gzip, br', 'x-token': 'A' });
    expect(sel).toEqual({ 'accept-encoding': 'br,gzip', 'x-token': 'A' });
    expect(selectionMatches(sel, { 'accept-encoding': 'br , gzip', 'x-token': 'A' })).toBe(true);
    expect(selectionMatches(sel, { 'accept-encoding': 'br , gzip', 'x-token': 'a' })).toBe(false);
    expect(selectionMatches({ 'accept-encoding': 'gzip, br' }, { 'accept-encoding': 'br,gzip' })).toBe(true);
    expect(selectionMatches(undefined, {})).toBe(true);
  });
  it('keys variants by the first entry and the normalised selection', () => {
    const k = (id: string, ae: string) => variantKey('http://h/p', id, ['accept-encoding'], { 'accept-encoding': ae });
    expect(k('f1', 'gzip, br')).toBe(k('f1', 'br,gzip'));
    expect(k('f1', 'gzip')).not.toBe(k('f1', 'br,gzip'));
    expect(k('f2', 'gzip')).not.toBe(k('f1', 'gzip'));
    expect(k('f1', 'gzip').startsWith('http://h/p')).toBe(true);
  });
});
