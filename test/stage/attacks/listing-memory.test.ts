// "A listing of any length holds the same memory" (docs/STAGING.md, about 110 MB peak for an
// endless listing of stalled objects). That holds for well-formed pages of up to 1,000 keys whose
// objects are queued. It does not hold for what a hostile or broken store can list:
// - one ListObjectsV2 response whose body never ends: the SDK buffers the whole body before it
//   parses it, so memory grows as fast as the store sends (2.3 GB after 20 s on loopback) until
//   the process dies of it;
// - one page of 200,000 keys instead of at most 1,000: parsed and held whole (650 MB);
// - pages of keys stage refuses (`..`): every refusal is kept in the summary's `failed` list, so
//   memory grows with the listing (967 MB after 365,000 keys), up to --max-objects (1,000,000).
// The first test is the reference: an endless listing of well-formed pages whose objects stall
// peaks at about 110 MB, as documented. Each test watches VmHWM of the running `estuary stage` and stops it once it passes the bound.

import { afterAll, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { type Hook, listXml, startFakeS3 } from './stage-fake-s3.ts';
import { stageChild } from './stage-run.ts';

afterAll(runTeardowns);

/** Peak resident memory the docs allow an endless listing, with room for a loaded machine. */
const BOUND_MB = 300;

const hwmMb = async (pid: number) => Number(/VmHWM:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

/** Runs `stage in` against `hook` for up to `seconds`; the highest VmHWM seen. */
async function peakOf(hook: Hook, seconds: number, bound = BOUND_MB): Promise<number> {
  return (await peaksOf(hook, seconds, bound)).at(-1)!;
}

/** Like peakOf, with the VmHWM of every second (the last is the peak). */
async function peaksOf(hook: Hook, seconds: number, bound: number): Promise<number[]> {
  const s3 = await startFakeS3();
  s3.hook = hook;
  const child = stageChild(['in', 's3://bkt/p/', join(await tempDir(), 'd'), '--endpoint', s3.endpoint, '--state-dir', await tempDir(), '--log-level', 'error']);
  let peak = 0;
  let done = false;
  const peaks: number[] = [];
  void child.exited.then(() => (done = true));
  for (let t = 0; t < seconds * 4 && !done && peak <= bound; t++) {
    await new Promise((r) => setTimeout(r, 250));
    peak = Math.max(peak, await hwmMb(child.pid).catch(() => 0));
    if (t % 4 === 3) peaks.push(Math.round(peak));
  }
  await child.stop('SIGKILL');
  peaks.push(Math.round(peak));
  return peaks;
}

const isList = (q: URLSearchParams) => q.get('list-type') === '2';

describe('stage in: memory whatever the store lists', () => {
  it('reference: an endless listing of well-formed pages stays bounded (holds today)', async () => {
    let pages = 0;
    const peak = await peakOf((req, res) => {
      if (!isList(req.url.searchParams)) return true;
      pages++;
      const entries = Array.from({ length: 1000 }, (_, i) => ({ key: `p/${pages}-${i}-${'x'.repeat(200)}`, size: 1, etag: '"x"' }));
      res.writeHead(200, { 'content-type': 'application/xml' }).end(listXml(entries, `t${pages}`));
      return true;
    }, 8);
    expect(peak).toBeLessThan(BOUND_MB);
  });

  it('a listing response whose body never ends', async () => {
    const chunk = Buffer.from(`<Contents><Key>p/${'z'.repeat(80)}</Key><Size>1</Size></Contents>`.repeat(1000));
    const peak = await peakOf((req, res) => {
      if (!isList(req.url.searchParams)) return true; // object requests stall
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.write('<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><IsTruncated>false</IsTruncated>');
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
      return true;
    }, 20);
    expect(peak).toBeLessThan(BOUND_MB);
  });

  it('one page of 200,000 keys', async () => {
    const xml = listXml(Array.from({ length: 200_000 }, (_, i) => ({ key: `p/k${i}-${'y'.repeat(100)}`, size: 1, etag: '"x"' })));
    const peak = await peakOf((req, res) => {
      if (!isList(req.url.searchParams)) return true;
      res.writeHead(200, { 'content-type': 'application/xml' }).end(xml);
      return true;
    }, 15);
    expect(peak).toBeLessThan(BOUND_MB);
  });

  // Refused keys never wait in the queue, so this listing streams in as fast as the store sends it
  // (about 30 pages a second on loopback): V8 then grows its young generation to its largest, and
  // the process sits at 300-370 MB on this machine, flat. What matters is that it stays flat: it
  // grew by about 2.6 MB per 1,000 keys before (967 MB after 365,000).
  it('an endless listing of keys it refuses', async () => {
    let pages = 0;
    const pad = 'x'.repeat(800);
    const peaks = await peaksOf((req, res) => {
      if (!isList(req.url.searchParams)) return true;
      pages++;
      const entries = Array.from({ length: 1000 }, (_, i) => ({ key: `p/../${pages}-${i}-${pad}`, size: 1, etag: '"x"' }));
      res.writeHead(200, { 'content-type': 'application/xml' }).end(listXml(entries, `t${pages}`));
      return true;
    }, 25, 2 * BOUND_MB);
    const early = peaks[Math.min(7, peaks.length - 1)]!; // after 8 s: 100,000 keys and more
    const last = peaks.at(-1)!;
    expect({ pages: pages > 100, flat: last - early < 40, under: last < 2 * BOUND_MB }, `peaks ${peaks.join(' ')} MB, ${pages} pages`).toEqual({ pages: true, flat: true, under: true });
  });
});
