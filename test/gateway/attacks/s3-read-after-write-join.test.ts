// Attack: the caching S3 endpoint, a GetObject sent after a PutObject's 200 while a download of
// the same object that began before the write is still arriving (a large object, a slow store).
//
// docs/STAGING.md ("Cache semantics for S3"): "a download that was already being fetched from the
// store when the write was acknowledged is delivered to its readers but not stored (nor shared
// with other workers), so every read that starts after a write's `200` sees the new version."
// Expected: the GetObject sent after the 200 returns the new object, on any worker.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import type { S3Server } from '../../helpers/s3rver.ts';
import { startOrigin } from '../helpers/origin.ts';
import { BUCKET, send, startRig } from './s3-harness.ts';

afterAll(runTeardowns);

describe('attack: S3 GetObject after PutObject joins a download begun before the write', () => {
  it('the read sent after the write\'s 200 gets the new object, not the download in flight', async () => {
    // A store whose GetObject fixes the version when the request arrives and takes 1.5 s to send it.
    let version = 0;
    const store = await startOrigin();
    store.route(`/${BUCKET}/data/obj`, (req: IncomingMessage, res: ServerResponse) => {
      if (req.method === 'PUT') {
        req.resume();
        req.on('end', () => {
          version++;
          res.writeHead(200, { etag: `"v${version}"`, 'content-length': 0 });
          res.end();
        });
        return;
      }
      const body = `version ${version} `.padEnd(256 * 1024, '.');
      res.writeHead(200, { etag: `"v${version}"`, 'content-length': body.length, 'last-modified': new Date().toUTCString() });
      if (req.method === 'HEAD') {
        res.end();
        return;
      }
      res.write(body.slice(0, 1000));
      setTimeout(() => res.end(body.slice(1000)), 1500);
    });
    const fake = { endpoint: store.url, accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret', region: 'us-east-1' } as unknown as S3Server;
    const rig = await startRig(fake, ['--workers', '2']);
    const reader = await rig.issue(`${BUCKET}/data/`, false);
    const writer = await rig.issue(`${BUCKET}/data/`, true);
    const early = send(rig.gw, reader, 'GET', `/${BUCKET}/data/obj`);
    await new Promise((r) => setTimeout(r, 300));
    const put = await send(rig.gw, writer, 'PUT', `/${BUCKET}/data/obj`, { body: 'new' });
    expect(put.status, put.body).toBe(200);
    const after = await send(rig.gw, reader, 'GET', `/${BUCKET}/data/obj`);
    expect(after.status).toBe(200);
    expect(after.body.slice(0, 10), `Cache-Status: ${String(after.headers['cache-status'])}`).toBe('version 1 ');
    expect((await early).body.slice(0, 10)).toBe('version 0 ');
  }, 40_000);
});
