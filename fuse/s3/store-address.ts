// Where the mount sends its requests and which region it signs for, by the AWS SDK's own rules
// for S3 with path-style addressing, without the SDK. Pure: the caller hands in the environment
// and the shared config's text (aws-shared-config.ts).
//
// The endpoint: --endpoint; else AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the `s3` block of the
// profile's `services` section, the profile's `endpoint_url` (all four skipped when
// AWS_IGNORE_CONFIGURED_ENDPOINT_URLS or the profile's `ignore_configured_endpoint_urls` is
// true); else AWS's own, `https://s3.REGION.DNS-SUFFIX` with the suffix of the region's partition,
// `s3-fips.` under AWS_USE_FIPS_ENDPOINT / `use_fips_endpoint` and `s3.dualstack.` under
// AWS_USE_DUALSTACK_ENDPOINT / `use_dualstack_endpoint`; as in the SDK's S3 rules, `aws-global`
// is the global endpoint `s3.amazonaws.com` (us-east-1's with either switch), signed for
// us-east-1, and FIPS in the China partition, which has no FIPS endpoints, is refused. The bucket is the URL's first path
// segment after the endpoint's own path. Those two switches name AWS's endpoints and mean nothing
// for an endpoint given as a URL: set with one, they are refused, as the SDK refuses them.
//
// The region: --region; else AWS_REGION, AWS_DEFAULT_REGION, the profile's `region`; else
// us-east-1. The profile is AWS_PROFILE, else `default`.

import { parseSharedConfig, profileSettings, s3ServiceSettings, type Settings } from './aws-shared-config.ts';

export type Env = Readonly<Record<string, string | undefined>>;

export interface StoreAddressInput {
  readonly bucket: string;
  readonly endpoint?: string;
  readonly region?: string;
  readonly env: Env;
  /** The shared config file's text; empty when there is none. */
  readonly sharedConfig: string;
}

export interface StoreAddress {
  /** `https://s3.eu-west-1.amazonaws.com/BUCKET`, or the endpoint's URL with the bucket appended. */
  readonly bucketUrl: URL;
  readonly region: string;
  /** Where the endpoint came from, for messages: `--endpoint`, `AWS_ENDPOINT_URL_S3`, ... */
  readonly endpointFrom: string;
}

/** A setting the mount cannot use; the message says which, where it came from and what to do. */
export class StoreAddressError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreAddressError';
  }
}

/** DNS suffixes of AWS's partitions, by region pattern (the SDK's partitions table). */
const PARTITIONS: readonly (readonly [RegExp, string])[] = [
  [/^cn-\w+-\d+$/, 'amazonaws.com.cn'],
  [/^eusc-de-\w+-\d+$/, 'amazonaws.eu'],
  [/^us-iso-\w+-\d+$/, 'c2s.ic.gov'],
  [/^us-isob-\w+-\d+$/, 'sc2s.sgov.gov'],
  [/^eu-isoe-\w+-\d+$/, 'cloud.adc-e.uk'],
  [/^us-isof-\w+-\d+$/, 'csp.hci.ic.gov'],
];

/** A region becomes part of a host name and of the signature's scope: a DNS label. */
const REGION = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

function flag(value: string | undefined, where: string): boolean {
  if (value === undefined) return false;
  const v = value.trim().toLowerCase();
  if (v === 'true') return true;
  if (v === 'false' || v === '') return false;
  throw new StoreAddressError(`${where} is ${JSON.stringify(value)}; set it to true or false`);
}

function pickRegion(input: StoreAddressInput, profile: Settings, profileName: string): string {
  const { env } = input;
  const [region, where] =
    input.region !== undefined
      ? [input.region, '--region']
      : env.AWS_REGION
        ? [env.AWS_REGION, 'AWS_REGION']
        : env.AWS_DEFAULT_REGION
          ? [env.AWS_DEFAULT_REGION, 'AWS_DEFAULT_REGION']
          : profile.region
            ? [profile.region, `the region of AWS profile "${profileName}"`]
            : ['us-east-1', 'the default'];
  if (!REGION.test(region))
    throw new StoreAddressError(`${where} is ${JSON.stringify(region)}, not a region such as eu-west-1; give --region`);
  return region;
}

/** The endpoint URL someone configured, and where: undefined for AWS's own. */
function configuredEndpoint(input: StoreAddressInput, profile: Settings, service: Settings, profileName: string) {
  if (input.endpoint !== undefined) return { url: input.endpoint, from: '--endpoint' };
  const { env } = input;
  const ignore = env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS !== undefined
    ? flag(env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS, 'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS')
    : flag(profile.ignore_configured_endpoint_urls, `ignore_configured_endpoint_urls of AWS profile "${profileName}"`);
  if (ignore) return undefined;
  if (env.AWS_ENDPOINT_URL_S3) return { url: env.AWS_ENDPOINT_URL_S3, from: 'AWS_ENDPOINT_URL_S3' };
  if (env.AWS_ENDPOINT_URL) return { url: env.AWS_ENDPOINT_URL, from: 'AWS_ENDPOINT_URL' };
  if (service.endpoint_url) return { url: service.endpoint_url, from: `the s3 endpoint_url of AWS profile "${profileName}"'s services` };
  if (profile.endpoint_url) return { url: profile.endpoint_url, from: `endpoint_url of AWS profile "${profileName}"` };
  return undefined;
}

function endpointUrl(text: string, from: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new StoreAddressError(`${from} is ${JSON.stringify(text)}, not a URL; give one such as http://127.0.0.1:9000`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new StoreAddressError(`${from} is ${JSON.stringify(text)}; give an http:// or https:// URL`);
  if (url.search || url.hash || url.username || url.password)
    throw new StoreAddressError(`${from} is ${JSON.stringify(url.origin + url.pathname)} with a query, fragment or user name; give the bare URL`);
  return url;
}

export function resolveStoreAddress(input: StoreAddressInput): StoreAddress {
  const { env } = input;
  const config = parseSharedConfig(input.sharedConfig);
  const profileName = env.AWS_PROFILE || 'default';
  const profile = profileSettings(config, profileName);
  const region = pickRegion(input, profile, profileName);
  const fips = env.AWS_USE_FIPS_ENDPOINT !== undefined
    ? flag(env.AWS_USE_FIPS_ENDPOINT, 'AWS_USE_FIPS_ENDPOINT')
    : flag(profile.use_fips_endpoint, `use_fips_endpoint of AWS profile "${profileName}"`);
  const dualStack = env.AWS_USE_DUALSTACK_ENDPOINT !== undefined
    ? flag(env.AWS_USE_DUALSTACK_ENDPOINT, 'AWS_USE_DUALSTACK_ENDPOINT')
    : flag(profile.use_dualstack_endpoint, `use_dualstack_endpoint of AWS profile "${profileName}"`);
  const configured = configuredEndpoint(input, profile, s3ServiceSettings(config, profile), profileName);
  const bucket = encodeURIComponent(input.bucket);
  if (configured) {
    if (fips || dualStack)
      throw new StoreAddressError(
        `${fips ? 'FIPS' : 'dual-stack'} endpoints are AWS's own, and ${configured.from} names another; unset ${fips ? 'AWS_USE_FIPS_ENDPOINT (use_fips_endpoint)' : 'AWS_USE_DUALSTACK_ENDPOINT (use_dualstack_endpoint)'} or the endpoint`,
      );
    const url = endpointUrl(configured.url, configured.from);
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/${bucket}`;
    return { bucketUrl: url, region, endpointFrom: configured.from };
  }
  return awsEndpoint(bucket, region, fips, dualStack);
}

/** AWS's own endpoint for the region, by the SDK's S3 endpoint rules (path-style). */
function awsEndpoint(bucket: string, region: string, fips: boolean, dualStack: boolean): StoreAddress {
  if (region === 'aws-global') {
    if (fips || dualStack) return awsEndpoint(bucket, 'us-east-1', fips, dualStack);
    return { bucketUrl: new URL(`https://s3.amazonaws.com/${bucket}`), region: 'us-east-1', endpointFrom: 'AWS' };
  }
  const suffix = PARTITIONS.find(([re]) => re.test(region))?.[1] ?? 'amazonaws.com';
  if (fips && suffix === 'amazonaws.com.cn')
    throw new StoreAddressError(
      `AWS has no FIPS endpoints for S3 in region ${region} (the China partition); unset AWS_USE_FIPS_ENDPOINT (use_fips_endpoint) or give another --region`,
    );
  const host = `${fips ? 's3-fips' : 's3'}${dualStack ? '.dualstack' : ''}.${region}.${suffix}`;
  return { bucketUrl: new URL(`https://${host}/${bucket}`), region, endpointFrom: 'AWS' };
}
