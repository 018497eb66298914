import { describe, expect, it } from 'vitest';
import { closeNames, didYouMean, editDistance } from '../../../lib/config/suggest.ts';

const GATEWAY = ['allow-dest', 'allow-client', 'listen', 'cache-dir', 'mem-cache', 'upstream', 'peers', 'no-verify', 'verify'];

describe('did you mean', () => {
  it('counts a swap of neighbours as one edit', () => {
    expect(editDistance('read-onyl', 'read-only')).toBe(1);
    expect(editDistance('alow-dest', 'allow-dest')).toBe(1);
    expect(editDistance('listen', 'listen')).toBe(0);
    expect(editDistance('', 'abc')).toBe(3);
  });

  it('suggests names within two edits, or that start the same way, nearest first', () => {
    expect(closeNames('alow-dest', GATEWAY)).toEqual(['allow-dest']);
    expect(closeNames('allow-destination', GATEWAY)).toEqual(['allow-dest']);
    expect(closeNames('allow', GATEWAY)).toEqual(['allow-client', 'allow-dest']);
    expect(closeNames('upstreams', GATEWAY)).toEqual(['upstream']);
    expect(closeNames('zzz', GATEWAY)).toEqual([]);
    // Two edits turn a short name into almost anything: only one counts there.
    expect(closeNames('peer', GATEWAY)).toEqual(['peers']);
    expect(closeNames('lis', GATEWAY)).toEqual(['listen']);
  });

  it('writes the hint for long flags only', () => {
    expect(didYouMean('--alow-dest', GATEWAY)).toBe('did you mean --allow-dest?');
    expect(didYouMean('--alow-dest=x', GATEWAY)).toBe('did you mean --allow-dest?');
    expect(didYouMean('--allow', GATEWAY)).toBe('did you mean --allow-client or --allow-dest?');
    expect(didYouMean('-x', GATEWAY)).toBe('');
    expect(didYouMean('--bogus', GATEWAY)).toBe('');
  });
});
