import { describe, expect, it } from 'vitest';
import {
  currentProxyValue,
  joinProxies,
  proxiesOf,
  setProxyValue,
} from '../../../discovery/client/cvmfs-config.ts';

const FILE = `# site config
CVMFS_REPOSITORIES=atlas.cern.ch,cms.cern.ch
CVMFS_HTTP_PROXY="http://old1:3128|http://old2:3128;DIRECT"
CVMFS_QUOTA_LIMIT=20000
`;

describe('CVMFS config editing', () => {
  it('reads the current value and its proxies', () => {
    expect(currentProxyValue(FILE)).toBe('http://old1:3128|http://old2:3128;DIRECT');
    expect(proxiesOf(currentProxyValue(FILE))).toEqual(['http://old1:3128', 'http://old2:3128', 'DIRECT']);
    expect(currentProxyValue('')).toBeUndefined();
  });
  it('replaces only the proxy line, keeping every other line and the trailing newline', () => {
    const out = setProxyValue(FILE, 'http://a:3128;DIRECT');
    expect(out).toBe(
      FILE.replace(
        'CVMFS_HTTP_PROXY="http://old1:3128|http://old2:3128;DIRECT"',
        'CVMFS_HTTP_PROXY="http://a:3128;DIRECT"',
      ),
    );
  });
  it('appends when there is no assignment, and collapses duplicates to one', () => {
    expect(setProxyValue('A=1\n', 'http://a:1')).toBe('A=1\nCVMFS_HTTP_PROXY="http://a:1"\n');
    expect(setProxyValue('', 'http://a:1')).toBe('CVMFS_HTTP_PROXY="http://a:1"\n');
    expect(setProxyValue("CVMFS_HTTP_PROXY=x\nB=2\nexport CVMFS_HTTP_PROXY='y'\n", 'z')).toBe(
      'CVMFS_HTTP_PROXY="z"\nB=2\n',
    );
  });
  it('refuses values that would break out of the quotes', () => {
    expect(() => setProxyValue(FILE, 'http://a"; rm -rf /')).toThrow();
    expect(() => setProxyValue(FILE, '$(id)')).toThrow();
  });
  it('joins without duplicates, first occurrence first', () => {
    expect(joinProxies(['http://a:1', 'http://b:1', 'http://a:1', 'DIRECT'])).toBe(
      'http://a:1;http://b:1;DIRECT',
    );
  });
});
