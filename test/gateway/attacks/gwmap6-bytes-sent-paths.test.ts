// Attack: `estuary_gateway_bytes_sent_total` when clients leave early, on the S3 paths other than
// a mapped disk hit (gwmap4 covered that one): range reads from blocks (cold and stored), a
// whole-object fill being streamed, a disk hit read in slices (a Range of a stored object), and
// a pass-through (Cache-Control: no-store).
// docs/CACHING.md: "an answer its client leaves early counts what had gone out, not its whole body".
// Each client reads its first bytes and resets; the counter may grow by what the loopback socket
// buffers could have taken (at most 8 MiB per answer here), never by the 48 MiB each asked for.

import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { metric } from './disk-lib.ts';
import { sleep } from './gateway-lib.ts';
import { getObject, signedHeaders, startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct } from './s3-harness.ts';

afterAll(runTeardowns);

const MiB = 2 ** 20;
const SIZE = 48 * MiB;

function leaveEarly(gw: string, cred: Parameters<typeof signedHeaders>[1], path: string, extra: Record<string, string>): Promise<number> {
  const u = new URL(gw);
  return new Promise((resolve) => {
    const req = http.request({ host: u.hostname, port: u.port, path, headers: signedHeaders(gw, cred, 'GET', path, extra), agent: false }, (res) => {
      res.once('data', (d: Buffer) => {
        req.destroy();
        resolve(d.length);
      });
      res.once('end', () => resolve(0));
    });
    req.on('error', () => resolve(0));
    req.end();
  });
}

describe('bytes_sent_total on S3 answers cut by their clients', () => {
  it('counts what went out on every path', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const g = await startS3Gw(store, ['--s3-block-size', '8MiB']);
    const cred = await g.issue(`${BUCKET}/run42/`);
    const report: string[] = [];
    const paths: [string, (i: number) => Promise<{ key: string; h: Record<string, string> }>][] = [
      ['blocks, cold', async (i) => ({ key: `run42/bc-${i}.bin`, h: { range: `bytes=0-${SIZE - 1}` } })],
      ['blocks, stored', async () => ({ key: 'run42/bs.bin', h: { range: `bytes=0-${SIZE - 1}` } })],
      ['fill streaming', async (i) => ({ key: `run42/fs-${i}.bin`, h: {} })],
      ['disk hit, range', async () => ({ key: 'run42/dh.bin', h: { range: `bytes=0-${SIZE - 2}` } })],
      ['pass (no-store)', async () => ({ key: 'run42/dh.bin', h: { 'cache-control': 'no-store' } })],
    ];
    const body = 'b'.repeat(SIZE);
    for (const [name] of paths) {
      if (name === 'blocks, stored') await direct(store, 'PUT', `/${BUCKET}/run42/bs.bin`, body);
      if (name === 'disk hit, range') await direct(store, 'PUT', `/${BUCKET}/run42/dh.bin`, body);
    }
    // Stored beforehand: every block of bs.bin, and dh.bin whole.
    for (let b = 0; b < SIZE / (8 * MiB); b++) await leaveEarlyFull(g.gw, cred, `/${BUCKET}/run42/bs.bin`, b);
    expect((await getObject(g.gw, cred, `/${BUCKET}/run42/dh.bin`)).complete).toBe(true);
    for (const [name, setup] of paths) {
      const before = await metric(g.port, 'estuary_gateway_bytes_sent_total');
      let got = 0;
      for (let i = 0; i < 4; i++) {
        const { key, h } = await setup(i);
        if (name.includes('cold') || name.includes('streaming')) await direct(store, 'PUT', `/${BUCKET}/${key}`, body);
        got += await leaveEarly(g.gw, cred, `/${BUCKET}/${key}`, h);
      }
      await sleep(1500);
      const delta = (await metric(g.port, 'estuary_gateway_bytes_sent_total')) - before;
      report.push(`${name}: counted ${(delta / MiB).toFixed(1)} MiB for 4 answers that delivered ${(got / MiB).toFixed(2)} MiB before the reset`);
    }
    expect(report.filter((l) => Number(/counted ([\d.]+)/.exec(l)![1]) > 4 * 8), report.join('\n')).toEqual([]);
  }, 180_000);
});

/** Reads block `b` of `path` whole, so it is stored. */
async function leaveEarlyFull(gw: string, cred: Parameters<typeof signedHeaders>[1], path: string, b: number): Promise<void> {
  const u = new URL(gw);
  const r = `bytes=${b * 8 * MiB}-${(b + 1) * 8 * MiB - 1}`;
  await new Promise<void>((resolve) => {
    const req = http.request({ host: u.hostname, port: u.port, path, headers: signedHeaders(gw, cred, 'GET', path, { range: r }), agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve());
    });
    req.on('error', () => resolve());
    req.end();
  });
}
