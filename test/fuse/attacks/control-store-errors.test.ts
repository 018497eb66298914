// Attack: a store that answers, but not with what the mount expects — the bucket is in another
// region (AWS answers 301 PermanentRedirect with x-amz-bucket-region, or 400
// AuthorizationHeaderMalformed naming the region), or the machine's clock is an hour off
// (403 RequestTimeTooSkewed). The mount must not call a server that answered "down", nor wrong
// keys "denied".

import { execFile } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { formatAmzDate, parseAmzDate } from '../../../lib/sigv4.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { NODE } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { type Answer, clientFor, type SeenRequest, startLyingServer, within, xml } from './lying-s3.ts';

afterAll(runTeardowns);

const BIN = new URL('../../../bin/estuary.js', import.meta.url).pathname;

/** The bucket's location probe answers; every signed request gets `wrongRegion`'s answer. */
function inEuWest1(kind: '301' | '400') {
  return (req: SeenRequest) => {
    if (req.url.searchParams.has('location'))
      return { body: xml('<LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/">eu-west-1</LocationConstraint>') };
    const headers = { 'x-amz-bucket-region': 'eu-west-1' };
    if (kind === '301')
      return {
        status: 301,
        headers,
        body: xml('<Error><Code>PermanentRedirect</Code><Message>The bucket you are attempting to access must be addressed using the specified endpoint.</Message><Endpoint>s3.eu-west-1.amazonaws.com</Endpoint><Bucket>bkt</Bucket></Error>'),
      };
    return {
      status: 400,
      headers,
      body: xml("<Error><Code>AuthorizationHeaderMalformed</Code><Message>The authorization header is malformed; the region 'us-east-1' is wrong; expecting 'eu-west-1'</Message><Region>eu-west-1</Region></Error>"),
    };
  };
}

function mount(endpoint: string, dir: string): Promise<{ code: number; out: string }> {
  const env = { ...process.env, AWS_ACCESS_KEY_ID: 'AK', AWS_SECRET_ACCESS_KEY: 'SK', AWS_REGION: 'us-east-1' };
  return new Promise((resolve) => {
    execFile(NODE, [BIN, 'mount', 'bkt', dir, '--endpoint', endpoint, '--retries', '2'], { env, timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err ? (err as { code?: number }).code : 0;
      resolve({ code: typeof code === 'number' ? code : -1, out: `${stdout}${stderr}` });
    });
  });
}

describe('a bucket in another region', () => {
  // Expected: a one-line error naming the bucket's region and the remedy (--region eu-west-1),
  // exit 2 (bad input). Today: "cannot reach the S3 endpoint ... (Http301 (HTTP 301): HTTP 301);
  // check --endpoint and that the server is up", exit 1 — although the server answered, and its
  // own location probe had just been told eu-west-1.
  for (const kind of ['301', '400'] as const) {
    it(`an answer ${kind} naming the region says which region to give`, async () => {
      const server = await startLyingServer(inEuWest1(kind));
      const { code, out } = await mount(server.endpoint, await tempDir('estuary-atk-mctl-mnt-'));
      expect(out).toContain('eu-west-1');
      expect(out).toContain('--region');
      expect(out).not.toContain('server is up');
      expect(code).toBe(2);
    });
  }
});

describe('a clock an hour off', () => {
  // Expected: as with the AWS SDK the mount used before (its signer corrects its clock by the
  // answer's Date header and the request is retried, docs: "Every call is retried by the rules
  // of the AWS SDK that made them before"), the HEAD succeeds. Today it fails as access-denied,
  // which the mount reports as "check AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY".
  it('RequestTimeTooSkewed with the server time is corrected and retried', async () => {
    const skewMs = 3600_000;
    const server = await startLyingServer((req): Answer => {
      const serverNow = Date.now() + skewMs;
      const signedAt = parseAmzDate(String(req.headers['x-amz-date'])) ?? 0;
      if (Math.abs(serverNow - signedAt) > 15 * 60_000)
        return {
          status: 403,
          headers: { date: new Date(serverNow).toUTCString() },
          body: xml(
            `<Error><Code>RequestTimeTooSkewed</Code><Message>The difference between the request time and the current time is too large.</Message>` +
              `<RequestTime>${formatAmzDate(signedAt)}</RequestTime><ServerTime>${new Date(serverNow).toISOString()}</ServerTime><MaxAllowedSkewMilliseconds>900000</MaxAllowedSkewMilliseconds></Error>`,
          ),
        };
      return { headers: { etag: '"e"', 'last-modified': new Date(serverNow).toUTCString() }, body: 'hello' };
    });
    const client = clientFor(server.endpoint);
    const got = await within(client.head('k'), 5000);
    expect(got).toHaveProperty('value');
    expect((got as { value: { size: number } }).value.size).toBe(5);
  });
});
