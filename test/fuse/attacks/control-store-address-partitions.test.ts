// Attack: FIPS and dual-stack switches and pseudo-regions that the AWS SDK's S3 endpoint rules
// treat specially. docs/SEMANTICS.md promises the store "as the AWS SDKs decide them"; the
// expected values below are what @aws-sdk/client-s3's endpoint rules (ForcePathStyle) return.

import { describe, expect, it } from 'vitest';
import { resolveStoreAddress, StoreAddressError } from '../../../fuse/s3/store-address.ts';

const resolve = (region: string, fips = false, dualStack = false) =>
  resolveStoreAddress({
    bucket: 'bkt',
    region,
    env: { AWS_USE_FIPS_ENDPOINT: String(fips), AWS_USE_DUALSTACK_ENDPOINT: String(dualStack) },
    sharedConfig: '',
  });

describe('FIPS and pseudo-regions as the SDK resolves them', () => {
  // Expected: refused, as the SDK refuses it ("Partition does not support FIPS"), with a message
  // naming AWS_USE_FIPS_ENDPOINT (ESTUARY_FS_STORE_ADDRESS, exit 2). Today the mount makes up
  // s3-fips.cn-north-1.amazonaws.com.cn, a host that does not exist, and reports the endpoint as
  // unreachable.
  it('FIPS in the China partition is refused', () => {
    expect(() => resolve('cn-north-1', true)).toThrow(StoreAddressError);
    expect(() => resolve('cn-north-1', true)).toThrow(/FIPS/);
  });

  // Expected: aws-global is the SDK's name for the global endpoint, s3.amazonaws.com, signed for
  // us-east-1 (with FIPS or dual-stack: us-east-1's). Today: s3.aws-global.amazonaws.com, a host
  // that does not exist, signed for a region named aws-global.
  it('aws-global is the global endpoint, signed for us-east-1', () => {
    expect(resolve('aws-global').bucketUrl.href).toBe('https://s3.amazonaws.com/bkt');
    expect(resolve('aws-global').region).toBe('us-east-1');
    expect(resolve('aws-global', true).bucketUrl.href).toBe('https://s3-fips.us-east-1.amazonaws.com/bkt');
    expect(resolve('aws-global', false, true).bucketUrl.href).toBe('https://s3.dualstack.us-east-1.amazonaws.com/bkt');
  });

  // Holds today: the other partitions' suffixes, FIPS and dual-stack where the SDK builds them.
  it('partitions, FIPS and dual-stack', () => {
    expect(resolve('cn-north-1', false, true).bucketUrl.href).toBe('https://s3.dualstack.cn-north-1.amazonaws.com.cn/bkt');
    expect(resolve('us-gov-west-1', true, true).bucketUrl.href).toBe('https://s3-fips.dualstack.us-gov-west-1.amazonaws.com/bkt');
    expect(resolve('us-iso-east-1').bucketUrl.href).toBe('https://s3.us-iso-east-1.c2s.ic.gov/bkt');
    expect(resolve('eusc-de-east-1').bucketUrl.href).toBe('https://s3.eusc-de-east-1.amazonaws.eu/bkt');
    expect(resolve('garage', true).bucketUrl.href).toBe('https://s3-fips.garage.amazonaws.com/bkt');
  });
});
