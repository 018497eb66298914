// EC2's two-minute spot interruption notice, seen from outside the instance: the spot request's
// status code turns marked-for-termination (or -stop, -hibernation). moto creates no spot request
// for RunInstances, so this runs against a local EC2 Query API server that answers the two calls
// involved exactly as the EC2 API reference shows them (DescribeInstances,
// DescribeSpotInstanceRequests).

import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ec2SiteSchema } from '../../coordinator/config.ts';
import { Ec2Site, spotNotice } from '../../coordinator/sites/ec2.ts';

const NS = 'http://ec2.amazonaws.com/doc/2016-11-15/';
let server: Server;
let endpoint: string;
let code = 'fulfilled';
const calls: string[] = [];

beforeAll(async () => {
  process.env.AWS_ACCESS_KEY_ID ??= 'testing';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'testing';
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      const action = form.get('Action') ?? '';
      calls.push(action);
      res.setHeader('content-type', 'text/xml');
      if (action === 'DescribeInstances') {
        res.end(`<DescribeInstancesResponse xmlns="${NS}"><requestId>r1</requestId><reservationSet><item>
<reservationId>r-1</reservationId><instancesSet><item><instanceId>${form.get('InstanceId.1')}</instanceId>
<instanceState><code>16</code><name>running</name></instanceState><instanceLifecycle>spot</instanceLifecycle>
<spotInstanceRequestId>sir-abc123</spotInstanceRequestId></item></instancesSet></item></reservationSet>
</DescribeInstancesResponse>`);
      } else if (action === 'DescribeSpotInstanceRequests') {
        expect(form.get('SpotInstanceRequestId.1')).toBe('sir-abc123');
        res.end(`<DescribeSpotInstanceRequestsResponse xmlns="${NS}"><requestId>r2</requestId><spotInstanceRequestSet><item>
<spotInstanceRequestId>sir-abc123</spotInstanceRequestId><state>active</state><status><code>${code}</code>
<updateTime>2026-11-23T22:00:00.000Z</updateTime><message>notice</message></status><instanceId>i-1</instanceId>
</item></spotInstanceRequestSet></DescribeSpotInstanceRequestsResponse>`);
      } else {
        res.statusCode = 400;
        res.end(`<Response><Errors><Error><Code>InvalidAction</Code><Message>${action}</Message></Error></Errors><RequestID>x</RequestID></Response>`);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('ec2 site: spot interruption notices', () => {
  it('knows the notice codes of the Spot request status reference', () => {
    expect(['marked-for-termination', 'marked-for-stop', 'marked-for-hibernation'].every(spotNotice)).toBe(true);
    expect(['fulfilled', 'request-canceled-and-instance-running', undefined].some(spotNotice)).toBe(false);
  });

  it('reports a running spot instance as interrupting once its request is marked, so its drone drains', async () => {
    const site = new Ec2Site('aws', ec2SiteSchema.parse({ region: 'us-east-1', endpoint, imageId: 'ami-1', instanceType: 't3.micro', spot: true }));
    code = 'fulfilled';
    expect(await site.status('d-1', { instance: 'i-1' })).toBe('running');
    code = 'marked-for-termination';
    expect(await site.status('d-1', { instance: 'i-1' })).toBe('interrupting');
    expect(calls).toEqual(['DescribeInstances', 'DescribeSpotInstanceRequests', 'DescribeInstances', 'DescribeSpotInstanceRequests']);
    await site.close();
  });
});
