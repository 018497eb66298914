// Read-after-write through the gateway: a GET whose fill started before another client's write
// (PUT → 200) is answered with the version it was fetching, but is not stored, so every read after
// the write's acknowledgement sees the new version. The store sits behind a relay that holds the
// first GET's body half-way until the write is done (a slow link), with one worker and with two.

import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { createServer, request, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { onTeardown } from '../helpers/cleanup.ts';
import { startS3rver } from '../helpers/s3rver.ts';
import type { S3Server } from '../helpers/s3rver.ts';
import { tempDir } from '../helpers/tmp.ts';
import { BUCKET, creds, gatewayFor, ISSUER, sdkDefaults } from './helpers/s3-clients.ts';
import { startGatewayProcess } from './helpers/gateway.ts';

const SIZE = 512 * 1024;

interface GateRelay {
  readonly url: string;
  /** Resolves when a GET of the held key has sent half its body. */
  readonly halfway: Promise<void>;
  release(): void;
}

/** Relays to `origin`; the first GET of `key` stops after half its body until release(). */
async function gateRelay(origin: string, key: string): Promise<GateRelay> {
  const to = new URL(origin);
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let halfway!: () => void;
  const atHalf = new Promise<void>((r) => (halfway = r));
  let held = false;
  const server = createServer((req, res) => {
    const hold = !held && req.method === 'GET' && req.url?.split('?')[0] === `/${BUCKET}/${key}`;
    if (hold) held = true;
    const up = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (upRes: IncomingMessage) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      if (!hold) return void upRes.pipe(res);
      const chunks: Buffer[] = [];
      upRes.on('data', (c: Buffer) => chunks.push(c));
      upRes.on('end', async () => {
        const body = Buffer.concat(chunks);
        res.write(body.subarray(0, body.length / 2));
        halfway();
        await released;
        res.end(body.subarray(body.length / 2));
      });
    });
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTeardown(() => {
    release();
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, halfway: atHalf, release };
}

async function read(s3: S3Client, key: string): Promise<Buffer> {
  const r = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return Buffer.from(await r.Body!.transformToByteArray());
}

async function gatewayProcess(store: S3Server, relay: string, workers: number): Promise<string> {
  const dir = await tempDir('estuary-gw-raw-');
  await writeFile(join(dir, 'issuer.key'), ISSUER);
  const keys = { default: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey, region: store.region } };
  await writeFile(join(dir, 'keys.json'), JSON.stringify(keys));
  const gw = await startGatewayProcess(['--s3', `${BUCKET}=${relay}`, '--s3-issuer-key-file', join(dir, 'issuer.key'), '--s3-credentials', join(dir, 'keys.json'), '--s3-revalidate', '60s', '--workers', String(workers)]);
  return gw.url;
}

describe('read-after-write while a fill of the old version is in flight', async () => {
  const store = await startS3rver({ buckets: [BUCKET] });
  const job = creds([{ bucket: BUCKET, prefix: 'run42/', write: true }]);

  for (const workers of [1, 2]) {
    it(`serves the new version after the write is acknowledged (${workers} worker${workers > 1 ? 's' : ''})`, async () => {
      const key = `run42/raw-${workers}`;
      const v1 = randomBytes(SIZE);
      const v2 = randomBytes(SIZE);
      const relay = await gateRelay(store.endpoint, key);
      const url = workers === 1 ? (await gatewayFor(relay.url, { keys: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey, region: store.region } })).url : await gatewayProcess(store, relay.url, workers);
      // Each client its own connection, as separate jobs would have (and so, likely, another worker).
      const client = () => sdkDefaults(url, job);
      await client().send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: v1 }));
      const slow = read(client(), key);
      await relay.halfway;
      await client().send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: v2 }));
      relay.release();
      expect((await slow).equals(v1)).toBe(true);
      for (let i = 0; i < 4; i++) expect((await read(client(), key)).equals(v2), `read ${i} after the write`).toBe(true);
    });
  }
});
