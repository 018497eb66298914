// 503 SlowDown from a real HTTP hop: the SDK client must retry with backoff and succeed, and
// report `throttled` once its attempts are spent.

import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { SdkObjectClient } from '../../../fuse/s3/sdk-client.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rverWithPaging } from '../s3rver.ts';

afterAll(runTeardowns);

const SLOW_DOWN =
  '<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>';

/** Forwards to `target`, answering 503 SlowDown to the next `budget.refuse` requests. */
async function throttlingProxy(target: number, budget: { refuse: number; refused: number }): Promise<number> {
  const server = createServer((req, res) => {
    if (budget.refuse > 0) {
      budget.refuse--;
      budget.refused++;
      req.resume();
      res.writeHead(503, { 'content-type': 'application/xml' }).end(SLOW_DOWN);
      return;
    }
    const up = request(
      { host: '127.0.0.1', port: target, path: req.url, method: req.method, headers: req.headers },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTeardown(() => new Promise<void>((r) => server.close(() => r())));
  return (server.address() as AddressInfo).port;
}

describe('throttling', () => {
  it('retries 503 SlowDown with backoff, then reports throttled', async () => {
    const s3 = await startS3rverWithPaging({ buckets: ['slow'] });
    const budget = { refuse: 0, refused: 0 };
    const port = await throttlingProxy(s3.port, budget);
    const client = new SdkObjectClient({
      bucket: 'slow',
      endpoint: `http://127.0.0.1:${port}`,
      region: s3.region,
      maxAttempts: 4,
      maxSockets: 4,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    onTeardown(() => client.destroy());
    budget.refuse = 2;
    await client.put('k', Buffer.from('patience'));
    expect(budget.refused).toBe(2);
    expect((await client.get('k')).toString()).toBe('patience');
    budget.refuse = 10;
    const err = await client.put('k2', Buffer.from('x')).catch((e: unknown) => e);
    expect((err as { kind?: string }).kind).toBe('throttled');
  });
});
