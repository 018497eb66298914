import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { classifyCvmfs, verifyContent } from '../../gateway/cvmfs.ts';

const SHA1 = createHash('sha1').update('x').digest('hex');

describe('classifyCvmfs', () => {
  it('finds the repository and the kind of object', () => {
    expect(classifyCvmfs('/cvmfs/atlas.cern.ch/.cvmfspublished')).toEqual({
      repo: 'atlas.cern.ch',
      kind: 'manifest',
    });
    expect(classifyCvmfs('/cvmfs/atlas.cern.ch/.cvmfswhitelist.pkcs7')?.kind).toBe('manifest');
    expect(classifyCvmfs('/cvmfs/info/v1/repositories.json')?.kind).toBe('manifest');
    expect(classifyCvmfs('/cvmfs/cms.cern.ch/api/v1.0/geo/p/s1,s2')?.kind).toBe('geo');
    expect(classifyCvmfs('/cvmfs/cms.cern.ch/some/file')?.kind).toBe('other');
    expect(classifyCvmfs('/other/path')).toBeUndefined();
  });
  it('reads the hash, its algorithm and a type suffix from data/ names', () => {
    const p = `/cvmfs/r.org/data/${SHA1.slice(0, 2)}/${SHA1.slice(2)}`;
    expect(classifyCvmfs(p)?.hash).toEqual({ algorithm: 'sha1', hex: SHA1 });
    expect(classifyCvmfs(`${p}C`)?.hash?.algorithm).toBe('sha1');
    expect(classifyCvmfs(`${p}-rmd160P`)?.hash?.algorithm).toBe('rmd160');
    expect(classifyCvmfs(`${p}-shake128`)?.hash?.algorithm).toBe('shake128');
    expect(classifyCvmfs(`/cvmfs/r.org/data/ab/cdef`)?.kind).toBe('other');
  });
});

describe('verifyContent', () => {
  it('checks bytes against their name for every algorithm', () => {
    expect(verifyContent('sha1', SHA1, Buffer.from('x'))).toBe(true);
    expect(verifyContent('sha1', SHA1, Buffer.from('y'))).toBe(false);
    const rmd = createHash('ripemd160').update('x').digest('hex');
    expect(verifyContent('rmd160', rmd, Buffer.from('x'))).toBe(true);
    const shake = createHash('shake128', { outputLength: 20 }).update('x').digest('hex');
    expect(verifyContent('shake128', shake, Buffer.from('x'))).toBe(true);
  });
});
