import { describe, expect, it } from 'vitest';
import { option, optional } from '../../../lib/config/options.ts';
import { printable, resolveConfig } from '../../../lib/config/resolve.ts';
import { duration, hostPort, list, size, str } from '../../../lib/config/values.ts';

const table = {
  listen: option(hostPort(), { host: '0.0.0.0', port: 3128 }, 'address'),
  memCache: option(size(), 256 * 2 ** 20, 'memory cache'),
  timeout: option(duration(), 5000, 'timeout'),
  allowDest: option(list(str('DOMAIN')), [] as string[], 'destinations'),
  adminToken: optional(str(), 'token', { secret: true }),
};

describe('precedence: flags > env > file > defaults', () => {
  it('takes defaults when nothing is set', () => {
    const r = resolveConfig('gateway', table, { flags: {}, env: {} });
    expect(r.config.memCache).toBe(256 * 2 ** 20);
    expect(r.config.adminToken).toBeUndefined();
    expect(r.origin.memCache).toBe('default');
  });
  it('file beats defaults, env beats file, flags beat env', () => {
    const file = {
      path: 'c.yaml',
      data: { 'mem-cache': '1GiB', timeout: 7, 'allow-dest': ['a.org', 'b.org'] },
    };
    const env = { ESTUARY_MEM_CACHE: '2GiB', ESTUARY_GATEWAY_TIMEOUT: '9s' };
    let r = resolveConfig('gateway', table, { flags: {}, env: {}, file });
    expect(r.config.memCache).toBe(2 ** 30);
    expect(r.config.timeout).toBe(7000);
    expect(r.config.allowDest).toEqual(['a.org', 'b.org']);
    r = resolveConfig('gateway', table, { flags: {}, env, file });
    expect(r.config.memCache).toBe(2 * 2 ** 30);
    expect(r.origin.timeout).toBe('env');
    expect(r.config.timeout).toBe(9000);
    r = resolveConfig('gateway', table, { flags: { memCache: '3GiB' }, env, file });
    expect(r.config.memCache).toBe(3 * 2 ** 30);
    expect(r.origin.memCache).toBe('flag');
  });
  it('the role-scoped variable beats the shared one', () => {
    const env = { ESTUARY_TIMEOUT: '1s', ESTUARY_GATEWAY_TIMEOUT: '2s' };
    expect(resolveConfig('gateway', table, { flags: {}, env }).config.timeout).toBe(2000);
  });
  it('reads a role section of a shared file', () => {
    const file = { path: 'host.yaml', data: { gateway: { 'mem-cache': '64MiB' }, agent: { interval: 30 } } };
    expect(resolveConfig('gateway', table, { flags: {}, env: {}, file }).config.memCache).toBe(64 * 2 ** 20);
  });
});

describe('bad values are one line naming the key, the value and what is allowed', () => {
  it('from a flag', () => {
    expect(() => resolveConfig('gateway', table, { flags: { memCache: '12XB' }, env: {} })).toThrow(
      'invalid value "12XB" for --mem-cache: expected a size such as 512MiB, 2GB or 1048576',
    );
  });
  it('from the environment', () => {
    expect(() =>
      resolveConfig('gateway', table, { flags: {}, env: { ESTUARY_GATEWAY_LISTEN: 'nope' } }),
    ).toThrow(/invalid value "nope" for ESTUARY_GATEWAY_LISTEN: expected HOST:PORT/);
  });
  it('from a file, including unknown keys', () => {
    const file = { path: 'c.yaml', data: { 'cahce-dir': '/x' } };
    expect(() => resolveConfig('gateway', table, { flags: {}, env: {}, file })).toThrow(
      /c.yaml: unknown key "cahce-dir" for gateway; known keys: listen, mem-cache/,
    );
    expect(() =>
      resolveConfig('gateway', table, { flags: {}, env: {}, file: { path: 'c.yaml', data: [1] } }),
    ).toThrow(/expected a mapping/);
  });
  it('carries exit status 2', () => {
    try {
      resolveConfig('gateway', table, { flags: { timeout: 'soon' }, env: {} });
      expect.unreachable();
    } catch (err) {
      expect((err as { exitCode: number }).exitCode).toBe(2);
      expect((err as { code: string }).code).toBe('ESTUARY_CONFIG_INVALID_VALUE');
    }
  });
});

it('printable hides secrets and says where values came from', () => {
  const r = resolveConfig('gateway', table, { flags: { adminToken: 's3cret' }, env: {} });
  const p = printable(table, r);
  expect(p['admin-token']).toEqual({ value: '<hidden>', from: 'flag' });
  expect(p.listen).toEqual({ value: '0.0.0.0:3128', from: 'default' });
});
