// Attack: 200 S3 readers that stop reading, on each S3 path that copies from a file: a range of a
// stored object (slices), stored blocks, blocks being fetched, and a whole-object fill in flight.
// docs/CACHING.md ("Collapsed forwarding and slow clients"): "A client that stops reading holds
// one small slice in the gateway: 100 clients stalled on a 20 MiB object cost about 13 MiB".
// Expected: the worker's anonymous memory grows by well under 200 × 1 MiB (here: under 60 MiB) on
// each path.

import { readFileSync } from 'node:fs';
import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { sleep } from './gateway-lib.ts';
import { getObject, signedHeaders, startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct } from './s3-harness.ts';

afterAll(runTeardowns);

const MiB = 2 ** 20;
const SIZE = 24 * MiB;

describe('200 stalled S3 readers', () => {
  it('hold little memory on every path', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const g = await startS3Gw(store, ['--s3-block-size', '8MiB']);
    const cred = await g.issue(`${BUCKET}/run42/`);
    const pid = g.child.pid!;
    const anon = () => Number(/RssAnon:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
    const body = Buffer.alloc(SIZE, 'x');
    const u = new URL(g.gw);
    const stall = (path: string, h: Record<string, string>) =>
      new Promise<http.ClientRequest>((resolve) => {
        const req = http.request({ host: u.hostname, port: u.port, path, headers: signedHeaders(g.gw, cred, 'GET', path, h), agent: false }, (res) => {
          res.pause();
          resolve(req);
        });
        req.on('error', () => undefined);
        req.end();
      });
    const report: string[] = [];
    const cases: [string, () => Promise<{ path: string; h: Record<string, string> }>][] = [
      ['range of a stored object', async () => {
        await direct(store, 'PUT', `/${BUCKET}/run42/whole.bin`, body.toString());
        expect((await getObject(g.gw, cred, `/${BUCKET}/run42/whole.bin`)).complete).toBe(true);
        return { path: `/${BUCKET}/run42/whole.bin`, h: { range: `bytes=1-${SIZE - 1}` } };
      }],
      ['blocks', async () => {
        await direct(store, 'PUT', `/${BUCKET}/run42/blocks.bin`, body.toString());
        return { path: `/${BUCKET}/run42/blocks.bin`, h: { range: `bytes=1-${SIZE - 1}` } };
      }],
      ['fill in flight', async () => {
        await direct(store, 'PUT', `/${BUCKET}/run42/fill.bin`, body.toString());
        return { path: `/${BUCKET}/run42/fill.bin`, h: {} };
      }],
    ];
    for (const [name, setup] of cases) {
      const { path, h } = await setup();
      await sleep(500);
      const before = anon();
      const readers = await Promise.all(Array.from({ length: 200 }, () => stall(path, h)));
      await sleep(3000);
      const grown = anon() - before;
      for (const r of readers) r.destroy();
      await sleep(1000);
      report.push(`${name}: +${grown.toFixed(0)} MiB`);
    }
    expect(report.filter((l) => Number(/\+(-?\d+)/.exec(l)![1]) >= 60), report.join(' | ')).toEqual([]);
  }, 120_000);
});
