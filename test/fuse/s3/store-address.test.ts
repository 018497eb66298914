import { describe, expect, it } from 'vitest';
import { parseSharedConfig, profileSettings, s3ServiceSettings } from '../../../fuse/s3/aws-shared-config.ts';
import { type Env, resolveStoreAddress, StoreAddressError } from '../../../fuse/s3/store-address.ts';

const resolve = (env: Env = {}, more: { endpoint?: string; region?: string; sharedConfig?: string } = {}) =>
  resolveStoreAddress({ bucket: 'kek', env, sharedConfig: '', ...more });
const url = (env: Env = {}, more: Parameters<typeof resolve>[1] = {}) => resolve(env, more).bucketUrl.href;

const CONFIG = `
# comment
[default]
region = eu-central-1
endpoint_url = http://default.example:9000

[profile dev]
region=ap-south-1
services = local
; another comment
[services local]
s3 =
  endpoint_url = http://127.0.0.1:9000/base/
  region = ignored-here

[profile fips]
use_fips_endpoint = true
region = us-gov-west-1

[profile bad]
use_dualstack_endpoint = yes
`;

describe('the shared config file', () => {
  it('reads profiles, sub-settings and the services section a profile names', () => {
    const c = parseSharedConfig(CONFIG);
    expect(profileSettings(c, 'default')).toMatchObject({ region: 'eu-central-1' });
    const dev = profileSettings(c, 'dev');
    expect(dev).toEqual({ region: 'ap-south-1', services: 'local' });
    expect(s3ServiceSettings(c, dev)).toEqual({ endpoint_url: 'http://127.0.0.1:9000/base/', region: 'ignored-here' });
    expect(profileSettings(c, 'nobody')).toEqual({});
    expect(profileSettings(parseSharedConfig('[dev]\nregion = x\n'), 'dev')).toEqual({});
  });

  it('lets a [profile default] with settings replace [default] whole, as the SDK does', () => {
    const both = parseSharedConfig('[default]\nregion = a\nendpoint_url = http://x\n[profile default]\nregion = b\n');
    expect(profileSettings(both, 'default')).toEqual({ region: 'b' });
    expect(profileSettings(parseSharedConfig('[default]\nregion = a\n[profile default]\n'), 'default')).toEqual({ region: 'a' });
  });
});

describe('the endpoint', () => {
  it("is AWS's own, path-style, in the region's partition", () => {
    expect(url()).toBe('https://s3.us-east-1.amazonaws.com/kek');
    expect(url({ AWS_REGION: 'eu-west-1' })).toBe('https://s3.eu-west-1.amazonaws.com/kek');
    expect(url({}, { region: 'cn-north-1' })).toBe('https://s3.cn-north-1.amazonaws.com.cn/kek');
    expect(url({}, { region: 'us-iso-east-1' })).toBe('https://s3.us-iso-east-1.c2s.ic.gov/kek');
    expect(url({}, { region: 'eusc-de-east-1' })).toBe('https://s3.eusc-de-east-1.amazonaws.eu/kek');
  });

  it('is FIPS or dual-stack when switched on, in the environment or the profile', () => {
    expect(url({ AWS_USE_FIPS_ENDPOINT: 'true', AWS_REGION: 'eu-west-1' })).toBe('https://s3-fips.eu-west-1.amazonaws.com/kek');
    expect(url({ AWS_USE_DUALSTACK_ENDPOINT: 'TRUE', AWS_REGION: 'eu-west-1' })).toBe('https://s3.dualstack.eu-west-1.amazonaws.com/kek');
    expect(url({ AWS_USE_FIPS_ENDPOINT: 'true', AWS_USE_DUALSTACK_ENDPOINT: 'true' })).toBe('https://s3-fips.dualstack.us-east-1.amazonaws.com/kek');
    expect(url({ AWS_PROFILE: 'fips' }, { sharedConfig: CONFIG })).toBe('https://s3-fips.us-gov-west-1.amazonaws.com/kek');
    expect(url({ AWS_PROFILE: 'fips', AWS_USE_FIPS_ENDPOINT: 'false' }, { sharedConfig: CONFIG })).toBe('https://s3.us-gov-west-1.amazonaws.com/kek');
  });

  it('is --endpoint first, then AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the services section, the profile', () => {
    const all = { AWS_ENDPOINT_URL_S3: 'http://s3-only:1', AWS_ENDPOINT_URL: 'http://any:2', AWS_PROFILE: 'dev' };
    expect(url(all, { endpoint: 'http://flag:3/', sharedConfig: CONFIG })).toBe('http://flag:3/kek');
    expect(url(all, { sharedConfig: CONFIG })).toBe('http://s3-only:1/kek');
    expect(resolve(all, { sharedConfig: CONFIG }).endpointFrom).toBe('AWS_ENDPOINT_URL_S3');
    expect(url({ ...all, AWS_ENDPOINT_URL_S3: undefined }, { sharedConfig: CONFIG })).toBe('http://any:2/kek');
    expect(url({ AWS_PROFILE: 'dev' }, { sharedConfig: CONFIG })).toBe('http://127.0.0.1:9000/base/kek');
    expect(url({}, { sharedConfig: CONFIG })).toBe('http://default.example:9000/kek');
  });

  it('skips the configured ones when told to ignore them, never --endpoint', () => {
    const env = { AWS_ENDPOINT_URL: 'http://any:2', AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true' };
    expect(url(env)).toBe('https://s3.us-east-1.amazonaws.com/kek');
    expect(url(env, { endpoint: 'http://flag:3' })).toBe('http://flag:3/kek');
    const ignoring = `${CONFIG}\n[profile quiet]\nendpoint_url = http://q:1\nignore_configured_endpoint_urls = true\n`;
    expect(url({ AWS_PROFILE: 'quiet' }, { sharedConfig: ignoring })).toBe('https://s3.us-east-1.amazonaws.com/kek');
  });

  it('refuses FIPS or dual-stack with an endpoint URL, switches that are not true or false, and bad URLs', () => {
    const refused = (env: Env, more: Parameters<typeof resolve>[1] = {}) => {
      expect(() => resolve(env, more)).toThrow(StoreAddressError);
      return (() => {
        try {
          resolve(env, more);
        } catch (e) {
          return (e as Error).message;
        }
      })();
    };
    expect(refused({ AWS_USE_FIPS_ENDPOINT: 'true' }, { endpoint: 'http://h:1' })).toMatch(/^FIPS endpoints are AWS's own, and --endpoint names another; unset AWS_USE_FIPS_ENDPOINT/);
    expect(refused({ AWS_USE_DUALSTACK_ENDPOINT: 'true', AWS_ENDPOINT_URL: 'http://h:1' })).toMatch(/dual-stack .* AWS_ENDPOINT_URL names another/);
    expect(refused({ AWS_USE_FIPS_ENDPOINT: 'on' })).toBe('AWS_USE_FIPS_ENDPOINT is "on"; set it to true or false');
    expect(refused({ AWS_PROFILE: 'bad' }, { sharedConfig: CONFIG })).toMatch(/use_dualstack_endpoint of AWS profile "bad" is "yes"/);
    expect(refused({ AWS_ENDPOINT_URL: 'not a url' })).toMatch(/AWS_ENDPOINT_URL is "not a url", not a URL/);
    expect(refused({ AWS_ENDPOINT_URL: 'ftp://h' })).toMatch(/http:\/\/ or https:\/\//);
    expect(refused({ AWS_ENDPOINT_URL_S3: 'http://u:p@h:1' })).toMatch(/user name/);
  });
});

describe('the region', () => {
  it('is --region, AWS_REGION, AWS_DEFAULT_REGION, the profile, else us-east-1', () => {
    const env = { AWS_REGION: 'r-env-1', AWS_DEFAULT_REGION: 'r-default-1', AWS_PROFILE: 'dev' };
    expect(resolve(env, { region: 'r-flag-1', sharedConfig: CONFIG }).region).toBe('r-flag-1');
    expect(resolve(env, { sharedConfig: CONFIG }).region).toBe('r-env-1');
    expect(resolve({ ...env, AWS_REGION: '' }, { sharedConfig: CONFIG }).region).toBe('r-default-1');
    expect(resolve({ AWS_PROFILE: 'dev' }, { sharedConfig: CONFIG }).region).toBe('ap-south-1');
    expect(resolve({}, { sharedConfig: CONFIG }).region).toBe('eu-central-1');
    expect(resolve().region).toBe('us-east-1');
  });

  it('is refused when it cannot be a host name label or a signing scope', () => {
    expect(() => resolve({ AWS_REGION: 'evil.com/x' })).toThrow('AWS_REGION is "evil.com/x", not a region such as eu-west-1; give --region');
    expect(() => resolve({}, { region: 'EU_WEST' })).toThrow(StoreAddressError);
  });
});
