// 503 SlowDown from a real HTTP hop: the mount's S3 client must retry with backoff and succeed, and
// report `throttled` once its attempts are spent.

import { afterAll, describe, expect, it } from 'vitest';
import { S3ObjectClient } from '../../../fuse/s3/s3-client.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { throttlingProxy } from './throttling-proxy.ts';

afterAll(runTeardowns);

describe('throttling', () => {
  it('retries 503 SlowDown with backoff, then reports throttled', async () => {
    const s3 = await startS3rver({ buckets: ['slow'] });
    const budget = { refuse: 0, refused: 0 };
    const port = await throttlingProxy(s3.port, budget);
    const client = new S3ObjectClient({
      bucket: 'slow',
      endpoint: `http://127.0.0.1:${port}`,
      region: s3.region,
      maxAttempts: 4,
      maxSockets: 4,
      idleTimeoutMs: 60_000,
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
