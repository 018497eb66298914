// Attack: an AWS shared config file (~/.aws/config) written the way people write them, with
// comments after a section title or a value and quoted profile names. docs/SEMANTICS.md ("Which
// store, which region, which keys") promises the store and region "as the AWS SDKs decide them";
// the AWS SDK for JavaScript v3 (@smithy/core shared-ini-file-loader parseIni) cuts a `#` or `;`
// comment that starts a line or follows white space, and reads `[profile "dev"]` as profile dev.

import { describe, expect, it } from 'vitest';
import { resolveStoreAddress } from '../../../fuse/s3/store-address.ts';

const resolve = (sharedConfig: string, profile?: string) =>
  resolveStoreAddress({ bucket: 'b', env: profile ? { AWS_PROFILE: profile } : {}, sharedConfig });

describe('the shared config as the SDK reads it', () => {
  // Expected: the default profile has no endpoint, so the mount goes to AWS. Today the title
  // `[profile dev] ; the dev store` is not recognised, so the dev profile's endpoint_url lands in
  // [default] and a mount of the default profile sends its requests to the dev store.
  it('a comment after a section title does not hand that section to the one before', () => {
    const config = '[default]\nregion = us-east-1\n[profile dev] ; the dev store\nendpoint_url = http://dev.example:9000\n';
    expect(resolve(config).bucketUrl.href).toBe('https://s3.us-east-1.amazonaws.com/b');
    expect(resolve(config, 'dev').bucketUrl.href).toBe('http://dev.example:9000/b');
  });

  // Expected: region eu-west-1, as the SDK reads it; today the mount refuses the profile's
  // region "eu-west-1 # Ireland".
  it('a comment after a value is not part of the value', () => {
    const address = resolve('[default]\nregion = eu-west-1 # Ireland\nendpoint_url = http://127.0.0.1:9000 ; local\n');
    expect(address.region).toBe('eu-west-1');
    expect(address.bucketUrl.href).toBe('http://127.0.0.1:9000/b');
  });

  // Expected: `[profile "dev"]` is profile dev (the SDK allows the name in quotes); today its
  // region is not found and the mount signs for us-east-1.
  it('a quoted profile name names the profile', () => {
    expect(resolve('[profile "dev"]\nregion = eu-west-1\n', 'dev').region).toBe('eu-west-1');
  });

  // Holds today: CRLF line ends and an indented services block.
  it('CRLF and a services block with an s3 sub-section', () => {
    const config =
      '[default]\r\nregion = eu-west-1\r\nservices = loc\r\n[services loc]\r\ns3 =\r\n  endpoint_url = http://127.0.0.1:9000\r\n';
    const address = resolve(config);
    expect(address.bucketUrl.href).toBe('http://127.0.0.1:9000/b');
    expect(address.region).toBe('eu-west-1');
  });
});
