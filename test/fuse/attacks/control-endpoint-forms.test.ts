// Attack: endpoint URLs in the forms people write them — an IPv6 literal with a port, a path in
// front of the bucket (a store behind a reverse proxy at /s3/), doubled trailing slashes — and
// AWS_ENDPOINT_URL_S3 empty or garbage. Every request must go to the path the endpoint names,
// with the Host it was signed for.

import { afterAll, describe, expect, it } from 'vitest';
import { S3ObjectClient } from '../../../fuse/s3/s3-client.ts';
import { StoreAddressError } from '../../../fuse/s3/store-address.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { clientFor, startLyingServer } from './lying-s3.ts';

afterAll(runTeardowns);

const ok = () => ({ headers: { etag: '"e"', 'content-length': '3' } });

describe('endpoint forms', () => {
  // Holds today.
  it('an IPv6 literal with a port', async () => {
    const server = await startLyingServer(ok, '::1');
    const client = clientFor(server.endpoint);
    expect((await client.head('a b/c+d'))?.size).toBe(3);
    expect(server.requests[0]!.headers.host).toBe(server.endpoint.replace('http://', ''));
    expect(server.requests[0]!.url.pathname).toBe('/bkt/a%20b/c%2Bd');
  });

  // Holds today.
  it('a path before the bucket, with trailing slashes', async () => {
    const server = await startLyingServer(ok);
    const client = clientFor(`${server.endpoint}/s3//`);
    await client.head('k');
    await client.checkBucket();
    expect(server.requests.map((r) => r.url.pathname)).toEqual(['/s3/bkt/k', '/s3/bkt']);
  });

  // Holds today: an empty AWS_ENDPOINT_URL_S3 is unset (as in the SDK), so AWS_ENDPOINT_URL
  // decides; a garbage one is refused with the variable's name.
  it('AWS_ENDPOINT_URL_S3 empty or garbage', async () => {
    const server = await startLyingServer(ok);
    const env = { AWS_ENDPOINT_URL_S3: '', AWS_ENDPOINT_URL: server.endpoint, AWS_ACCESS_KEY_ID: 'AK', AWS_SECRET_ACCESS_KEY: 'SK' };
    const viaEnv = new S3ObjectClient({ bucket: 'bkt', maxAttempts: 1, idleTimeoutMs: 2000, maxSockets: 2, env });
    expect(viaEnv.address.bucketUrl.href).toBe(`${server.endpoint}/bkt`);
    viaEnv.destroy();
    const make = () =>
      new S3ObjectClient({ bucket: 'bkt', maxAttempts: 1, idleTimeoutMs: 2000, maxSockets: 2, env: { ...env, AWS_ENDPOINT_URL_S3: 'not a url' } });
    expect(make).toThrow(StoreAddressError);
    expect(make).toThrow(/AWS_ENDPOINT_URL_S3/);
  });
});
