// Attack: a second user of the S3 endpoint, with a write credential for their own prefix only,
// makes the gateway forget another user's write. Each worker remembers the last 100,000 keys
// written through it, so that a download begun before a write is not stored; one DeleteObjects
// request names up to 1,000 keys, so 110 requests of keys under the attacker's own prefix push
// the victim's key out.
//
// docs/STAGING.md ("Cache semantics for S3"): "a download that was already being fetched from the
// store when the write was acknowledged is delivered to its readers but not stored ... so every
// read that starts after a write's `200` sees the new version." Expected: that holds whatever
// other users delete meanwhile.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import type { S3Server } from '../../helpers/s3rver.ts';
import { startOrigin } from '../helpers/origin.ts';
import { BUCKET, send, startRig } from './s3-harness.ts';

afterAll(runTeardowns);

describe('attack: another user\'s DeleteObjects batches evict the memory of a write', () => {
  it('a download begun before an acknowledged PutObject is not stored after 110,000 keys were deleted elsewhere', async () => {
    let version = 0;
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
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
      const body = `version ${version}`.padEnd(4096, '.');
      res.writeHead(200, { etag: `"v${version}"`, 'content-length': body.length, 'last-modified': new Date().toUTCString() });
      res.write(body.slice(0, 100));
      void released.then(() => res.end(body.slice(100)));
    });
    // DeleteObjects: every key deleted.
    store.route(`/${BUCKET}`, (req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.on('end', () => {
        const xml = '<?xml version="1.0" encoding="UTF-8"?><DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"></DeleteResult>';
        res.writeHead(200, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(xml) });
        res.end(xml);
      });
    });
    const fake = { endpoint: store.url, accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret', region: 'us-east-1' } as unknown as S3Server;
    const rig = await startRig(fake, ['--workers', '2', '--idle-timeout', '2m']);
    const victim = await rig.issue(`${BUCKET}/data/`, true);
    const other = await rig.issue(`${BUCKET}/scratch/`, true);
    const early = send(rig.gw, victim, 'GET', `/${BUCKET}/data/obj`);
    await new Promise((r) => setTimeout(r, 300));
    expect((await send(rig.gw, victim, 'PUT', `/${BUCKET}/data/obj`, { body: 'new' })).status).toBe(200);
    // The other user cleans up 110,000 scratch keys, 1,000 per request, four requests at a time.
    let batch = 0;
    const worker = async () => {
      while (batch < 110) {
        const b = batch++;
        const keys = Array.from({ length: 1000 }, (_, i) => `<Object><Key>scratch/${b}-${i}</Key></Object>`).join('');
        const r = await send(rig.gw, other, 'POST', `/${BUCKET}?delete`, { body: `<Delete><Quiet>true</Quiet>${keys}</Delete>` });
        expect(r.status, r.body).toBe(200);
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    // Each deleted key is relayed to the other worker one message at a time: let them all arrive.
    await new Promise((r) => setTimeout(r, 5000));
    release();
    expect((await early).body.slice(0, 9)).toBe('version 0');
    await new Promise((r) => setTimeout(r, 300));
    const after = await send(rig.gw, victim, 'GET', `/${BUCKET}/data/obj`);
    expect(after.body.slice(0, 9), `Cache-Status: ${String(after.headers['cache-status'])}`).toBe('version 1');
  }, 60_000);
});
