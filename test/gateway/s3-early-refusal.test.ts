// A store that refuses an upload before reading its body gets its answer to the client through the
// gateway, not a cut connection. In front of s3rver sits a front end that, as nginx does with
// client_max_body_size, answers 413 to a body over 1 MiB at once (without 100 Continue when the
// request expects one) and closes. The SDK sends large bodies with Expect: 100-continue; the
// gateway's 100 now waits for the store's, so the refusal arrives before any body is sent.

import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { onTeardown } from '../helpers/cleanup.ts';
import { startS3rver } from '../helpers/s3rver.ts';
import { BUCKET, creds, gatewayFor, sdkDefaults } from './helpers/s3-clients.ts';

const MiB = 1024 * 1024;
const LIMIT = MiB;

async function bodyLimit(origin: string): Promise<string> {
  const to = new URL(origin);
  const refuse = (res: ServerResponse) => {
    const body = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>EntityTooLarge</Code><Message>Your proposed upload exceeds the maximum allowed size</Message></Error>';
    res.writeHead(413, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body), connection: 'close' });
    res.end(body);
  };
  const relay = (req: IncomingMessage, res: ServerResponse) => {
    if (Number(req.headers['content-length'] ?? 0) > LIMIT) return refuse(res);
    const up = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    req.pipe(up);
  };
  const server = createServer(relay);
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (Number(req.headers['content-length'] ?? 0) > LIMIT) return refuse(res);
    res.writeContinue();
    relay(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTeardown(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

describe('a store that refuses an upload early', async () => {
  const store = await startS3rver({ buckets: [BUCKET] });
  const front = await bodyLimit(store.endpoint);
  const gw = await gatewayFor(front, { keys: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey, region: store.region } });
  const sdk = sdkDefaults(gw.url, creds([{ bucket: BUCKET, prefix: 'run42/', write: true }]));

  it("gets the store's own answer to the client, and takes what the store accepts", async () => {
    for (let i = 0; i < 2; i++) {
      const put = sdk.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'run42/big', Body: Buffer.alloc(16 * MiB, 1) }));
      await expect(put).rejects.toMatchObject({ name: 'EntityTooLarge', $metadata: { httpStatusCode: 413 } });
    }
    await sdk.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'run42/small', Body: Buffer.alloc(2 * MiB - LIMIT, 1) }));
  });
});
