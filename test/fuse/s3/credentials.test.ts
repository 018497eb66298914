import { describe, expect, it } from 'vitest';
import { CredentialsError, credentialSource, type ExpiringCredentials, REFRESH_BEFORE_MS, refreshing } from '../../../fuse/s3/credentials.ts';

/** A chain that counts how often it is loaded and asked, handing out what `next` gives. */
function fakeChain(next: (n: number) => ExpiringCredentials) {
  const seen = { loads: 0, asks: 0 };
  const load = async () => {
    seen.loads++;
    return async () => next(++seen.asks);
  };
  return { seen, load };
}

describe('credentialSource', () => {
  it('takes given keys, then the environment, and loads no chain for either', async () => {
    const chain = fakeChain(() => ({ accessKeyId: 'chain', secretAccessKey: 's' }));
    const given = { accessKeyId: 'given', secretAccessKey: 's' };
    expect(await credentialSource(given, { AWS_ACCESS_KEY_ID: 'env', AWS_SECRET_ACCESS_KEY: 'x' }, chain.load)()).toEqual(given);
    const env = { AWS_ACCESS_KEY_ID: 'env', AWS_SECRET_ACCESS_KEY: 'x', AWS_SESSION_TOKEN: 't' };
    expect(await credentialSource(undefined, env, chain.load)()).toEqual({ accessKeyId: 'env', secretAccessKey: 'x', sessionToken: 't' });
    expect(chain.seen.loads).toBe(0);
  });

  it('loads the chain only without keys (an id without a secret is not keys)', async () => {
    const chain = fakeChain(() => ({ accessKeyId: 'chain', secretAccessKey: 's' }));
    const source = credentialSource(undefined, { AWS_ACCESS_KEY_ID: 'half' }, chain.load);
    expect(chain.seen.loads).toBe(0);
    expect((await source()).accessKeyId).toBe('chain');
    await source();
    expect(chain.seen).toEqual({ loads: 1, asks: 1 });
  });
});

describe('keys from the environment', () => {
  it('are refused, by name, when they hold a line break, a control character or white space at an end', () => {
    const load = fakeChain(() => ({ accessKeyId: 'chain', secretAccessKey: 's' })).load;
    const keys = { AWS_ACCESS_KEY_ID: 'AK', AWS_SECRET_ACCESS_KEY: 'SK', AWS_SESSION_TOKEN: 'T' };
    for (const [name, value, what] of [
      ['AWS_ACCESS_KEY_ID', 'AK\r', 'a line break'],
      ['AWS_SECRET_ACCESS_KEY', 'S\x01K', 'a control character'],
      ['AWS_SESSION_TOKEN', ' T', 'white space'],
    ] as const) {
      const source = () => credentialSource(undefined, { ...keys, [name]: value }, load);
      expect(source).toThrow(CredentialsError);
      expect(source).toThrow(new RegExp(`^${name} holds ${what}`));
    }
  });
});

describe('refreshing', () => {
  it('asks again five minutes before the keys expire, not before', async () => {
    let now = 1_000_000;
    const chain = fakeChain((n) => ({ accessKeyId: `k${n}`, secretAccessKey: 's', expiration: new Date(now + 3_600_000) }));
    const source = refreshing(chain.load, () => now);
    expect((await source()).accessKeyId).toBe('k1');
    now += 3_600_000 - REFRESH_BEFORE_MS - 1;
    expect((await source()).accessKeyId).toBe('k1');
    now += 2;
    expect((await source()).accessKeyId).toBe('k2');
    expect(chain.seen.loads).toBe(1);
  });

  it('shares one request among callers, and tries a failed load again', async () => {
    let fail = true;
    let asks = 0;
    const source = refreshing(async () => {
      if (fail) throw Object.assign(new Error('no profile'), { name: 'CredentialsProviderError' });
      return async () => {
        asks++;
        await new Promise((r) => setTimeout(r, 10));
        return { accessKeyId: 'k', secretAccessKey: 's' };
      };
    });
    await expect(source()).rejects.toThrow('no profile');
    fail = false;
    const got = await Promise.all([source(), source(), source()]);
    expect(got.map((c) => c.accessKeyId)).toEqual(['k', 'k', 'k']);
    expect(asks).toBe(1);
  });
});
