// Attack: a HEAD of an S3 object in flight while the object is written through the gateway.
//
// A HEAD's answer (the gateway's own, for block reads, or a client's HEAD passed through) is
// remembered as "the version" of the object and trusted for --s3-revalidate (blocks.ts
// noteVersion). A write through the gateway forgets that version at once; but a HEAD the store
// answered before the write, whose answer reaches the gateway after the write's 200, is
// remembered afterwards, with a fresh time. Every range read that starts after the write's 200 is
// then served from the blocks stored of the old version, for up to --s3-revalidate.
// docs/STAGING.md: "a write or delete through the gateway forgets it at once"; "every read that
// starts after a write's 200 sees the new version ... No other client's writes, however many,
// weaken this for yours". (Whole-object fills guard this with `overtaken`; versions do not.)
// Here a relay in front of s3rver holds one HEAD's answer for 1.5 s, as a slow link does.
// Expected: a range read after the write's 200 returns the new version's bytes.

import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { sleep } from './gateway-lib.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct, send } from './s3-harness.ts';

afterAll(runTeardowns);

const MiB = 2 ** 20;
const text = (n: number, seed: string) => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);

/** A relay to `origin` that holds the answer of the next HEAD for `holdMs` once `arm()` was called. */
async function holdingRelay(origin: string): Promise<{ url: string; arm: (holdMs: number) => void; held: () => number }> {
  const to = new URL(origin);
  let hold = 0;
  let held = 0;
  const srv = http.createServer((req, res) => {
    const up = http.request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (ur) => {
      const wait = req.method === 'HEAD' && hold > 0 ? hold : 0;
      if (wait) {
        hold = 0;
        held++;
      }
      setTimeout(() => {
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        ur.pipe(res);
      }, wait);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  onTeardown(() => new Promise<void>((r) => { srv.closeAllConnections(); srv.close(() => r()); }));
  return { url: `http://127.0.0.1:${(srv.address() as { port: number }).port}`, arm: (ms) => (hold = ms), held: () => held };
}

describe('a HEAD answered before a write and received after it', () => {
  it('does not bring the old version back for range reads', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const relay = await holdingRelay(store.endpoint);
    const g = await startS3Gw({ ...store, endpoint: relay.url }, ['--s3-block-size', '1MiB']);
    const reader = await g.issue(`${BUCKET}/run42/`);
    const writer = await g.issue(`${BUCKET}/run42/`, true);
    const key = `/${BUCKET}/run42/data.bin`;
    const v1 = text(4 * MiB, 'version-1-old-bytes-');
    const v2 = text(4 * MiB, 'VERSION-2-NEW-BYTES-');
    expect((await direct(store, 'PUT', key, v1)).status).toBe(200);
    // Block 0 of v1 is stored.
    const warm = await send(g.gw, reader, 'GET', key, { headers: { range: 'bytes=0-99' } });
    expect(warm.body).toBe(v1.slice(0, 100));
    // A client's HEAD reaches the store (v1) while its answer is held on the way back...
    relay.arm(1500);
    const head = send(g.gw, reader, 'HEAD', key);
    await sleep(300);
    // ...and meanwhile the object is replaced through the gateway.
    const put = await send(g.gw, writer, 'PUT', key, { body: v2 });
    expect(put.status).toBe(200);
    const after1 = await send(g.gw, reader, 'GET', key, { headers: { range: 'bytes=0-99' } });
    await head;
    expect(relay.held()).toBe(1);
    const after2 = await send(g.gw, reader, 'GET', key, { headers: { range: 'bytes=0-99' } });
    const name = (b: string) => (b === v2.slice(0, 100) ? 'v2' : b === v1.slice(0, 100) ? 'v1 (old)' : `other: ${b.slice(0, 30)}`);
    expect({ beforeHeadLanded: name(after1.body), afterHeadLanded: `${name(after2.body)} ${String(after2.headers['cache-status'])}` }).toEqual({
      beforeHeadLanded: 'v2',
      afterHeadLanded: expect.stringMatching(/^v2 /),
    });
  }, 60_000);

  it('does not bring a deleted object back for range reads', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const relay = await holdingRelay(store.endpoint);
    const g = await startS3Gw({ ...store, endpoint: relay.url }, ['--s3-block-size', '1MiB']);
    const reader = await g.issue(`${BUCKET}/run42/`);
    const writer = await g.issue(`${BUCKET}/run42/`, true);
    const key = `/${BUCKET}/run42/retracted.bin`;
    const v1 = text(4 * MiB, 'retracted-bytes-');
    expect((await direct(store, 'PUT', key, v1)).status).toBe(200);
    expect((await send(g.gw, reader, 'GET', key, { headers: { range: 'bytes=0-99' } })).body).toBe(v1.slice(0, 100));
    relay.arm(1500);
    const head = send(g.gw, reader, 'HEAD', key);
    await sleep(300);
    expect((await send(g.gw, writer, 'DELETE', key)).status).toBe(204);
    await head;
    const after = await send(g.gw, reader, 'GET', key, { headers: { range: 'bytes=0-99' } });
    expect(`${after.status} ${after.body === v1.slice(0, 100) ? 'deleted bytes' : ''} ${String(after.headers['cache-status'])}`).toMatch(/^404 /);
  }, 60_000);
});
