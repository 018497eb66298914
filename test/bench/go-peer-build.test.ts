import { describe, expect, it } from 'vitest';
import { GOOFYS, GOOFYS_PINS, GOOFYS_SUMS, goofysGoMod, isExactVersion } from '../../bench/go-peer-build.ts';

describe('the goofys build module', () => {
  it('asks the proxy only for exact versions', () => {
    for (const v of ['v0.24.0', 'v32.1.0+incompatible', 'v0.0.0-20190222173326-2bc1f35cddc0', 'v1.4.3-0.20190807103436-de736cf91b92'])
      expect(isExactVersion(v), v).toBe(true);
    // What makes go ask for a version list, which proxies may refuse.
    for (const v of ['latest', 'master', 'v1.2', '', 'v1.2.3 ', '>=v1.0.0'])
      expect(isExactVersion(v), v).toBe(false);
  });

  it('pins goofys and each dependency once, and builds with the fuse fork goofys vendored', () => {
    const mod = goofysGoMod();
    const required = [...mod.matchAll(/^\t(\S+) (\S+)$/gm)].map((m) => m[1]);
    expect(required).toContain(GOOFYS.path);
    expect(new Set(required).size).toBe(required.length);
    expect(required).toHaveLength(GOOFYS_PINS.length + 1);
    expect(mod).toMatch(/^replace github\.com\/jacobsa\/fuse => github\.com\/kahing\/fusego v0\.0\.0-\d{14}-[0-9a-f]{12}$/m);
  });

  it('carries a pinned hash for goofys itself', () => {
    expect(GOOFYS_SUMS.some((l) => l.startsWith(`${GOOFYS.path} ${GOOFYS.version} h1:`))).toBe(true);
  });
});
