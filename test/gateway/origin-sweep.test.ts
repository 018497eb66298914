// Ordinary origin behaviour must never crash the gateway or cost a client a byte. A raw origin
// (test/gateway/helpers/raw-origin.ts) answers with bodies from 0 to 1 MiB around every power of
// two and the 64/128 KiB boundaries, framed by Content-Length, chunked or the end of the
// connection, over HTTP/1.0, HTTP/1.1 with and without `Connection: close`, and keep-alive
// connections it closes at random when idle. Python's http.server (HTTP/1.0, what many users try
// first) is a second origin. Every body goes through forward mode, reverse mode and the S3
// endpoint of one gateway, with one worker and with two; every client must get exactly the
// origin's bytes, and the gateway must not lose a worker.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { issue } from '../../gateway/s3/credentials.ts';
import { startChild } from '../helpers/process.ts';
import { tempDir } from '../helpers/tmp.ts';
import { send } from './helpers/client.ts';
import { startGatewayProcess } from './helpers/gateway.ts';
import { CASES, type Conn, type Framing, rawBody, rawPath, sha256, startRawOrigin } from './helpers/raw-origin.ts';

const KiB = 1024;
/** 0, 1, and 2^k ± 1 for k = 10…20 (1 KiB … 1 MiB), plus 64 KiB, 128 KiB and 80,000 exactly. */
const SIZES = [
  0,
  1,
  ...Array.from({ length: 11 }, (_, i) => 2 ** (i + 10)).flatMap((p) => [p - 1, p + 1]),
  64 * KiB,
  80_000,
  128 * KiB,
].filter((s) => s <= 1024 * KiB);
/** Reverse mode and S3 share forward mode's code past the target; the boundaries suffice there. */
const FEW_SIZES = [0, 1, 64 * KiB - 1, 64 * KiB + 1, 80_000, 128 * KiB + 1, 1024 * KiB];
const ISSUER = 'origin-sweep-issuer-key-0123456789abcdef';
const BUCKET = 'sweep';
/** Requests in flight at once: enough to overlap fills, few enough for a loaded 2-core machine. */
const PARALLEL = 6;

interface Case {
  readonly mode: 'forward' | 'reverse' | 's3';
  readonly conn: Conn;
  readonly framing: Framing;
  readonly size: number;
}

/**
 * Every size for the bodies whose end the connection marks (where undici 7 crashed), the
 * boundaries for kept-alive connections: the file stays well under a minute on a loaded machine.
 */
function casesFor(mode: Case['mode'], sizes: readonly number[]): Case[] {
  return CASES.flatMap((c) =>
    (c.conn === 'http10' || c.conn === 'close' ? sizes : FEW_SIZES).map((size) => ({ mode, ...c, size })),
  );
}

async function pool<T>(items: readonly T[], run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < items.length) await run(items[next++]!);
    }),
  );
}

async function startPythonOrigin(): Promise<{ url: string; sizes: number[] }> {
  const dir = await tempDir('estuary-sweep-py-');
  const sizes = [0, 65_535, 65_537, 80_000, 131_073, 1024 * KiB];
  for (const s of sizes) await writeFile(join(dir, `f${s}`), rawBody(s));
  const child = startChild('python3', ['-u', '-m', 'http.server', '0', '--bind', '127.0.0.1', '--directory', dir]);
  const m = await child.waitFor(/port (\d+)/, 10_000);
  return { url: `http://127.0.0.1:${m[1]}`, sizes };
}

describe.each([1, 2])('origin behaviour sweep, --workers %i', async (workers) => {
  const origin = await startRawOrigin(workers);
  const python = await startPythonOrigin();
  const dir = await tempDir('estuary-sweep-');
  await writeFile(join(dir, 'issuer.key'), ISSUER);
  await writeFile(join(dir, 'keys.json'), JSON.stringify({ default: { accessKeyId: 'AK', secretAccessKey: 'SK', region: 'us-east-1' } }));
  const gw = await startGatewayProcess([
    '--workers', String(workers),
    '--allow-dest', '127.0.0.1',
    '--upstream', `raw=${origin.url}`,
    '--upstream', `py=${python.url}`,
    '--s3', `${BUCKET}=${origin.url}`,
    '--s3-issuer-key-file', join(dir, 'issuer.key'),
    '--s3-credentials', join(dir, 'keys.json'),
  ]);
  const c = issue(ISSUER, [{ bucket: BUCKET, prefix: '', write: false }], 3_600_000, Date.now());
  const s3 = new S3Client({
    endpoint: gw.url,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey, sessionToken: c.sessionToken },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 1,
  });
  const failures: string[] = [];

  async function fetchCase(k: Case, round: number): Promise<void> {
    const want = sha256(rawBody(k.size));
    const label = `${k.mode} ${k.conn}/${k.framing}/${k.size} #${round}`;
    try {
      let got: Uint8Array;
      if (k.mode === 's3') {
        const r = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: rawPath('s3', k, k.size).slice(1) }));
        got = await r.Body!.transformToByteArray();
      } else {
        const target = k.mode === 'forward' ? rawPath(`${origin.url}/fwd`, k, k.size) : rawPath('/rev', k, k.size);
        const r = await send(gw.url, target, k.mode === 'reverse' ? { headers: { host: 'raw' } } : {});
        if (r.status !== 200 || !r.complete) throw new Error(`status ${r.status}, complete ${r.complete}`);
        got = r.body;
      }
      if (sha256(got) !== want) throw new Error(`${got.length} bytes, not the origin's ${k.size}`);
    } catch (err) {
      failures.push(`${label}: ${(err as Error).message}`);
    }
  }

  it('every client gets the origin’s exact bytes, uncached and then cached', async () => {
    const all = [...casesFor('forward', SIZES), ...casesFor('reverse', FEW_SIZES), ...casesFor('s3', FEW_SIZES)];
    await pool(all, (k) => fetchCase(k, 1));
    // Served from the cache now (memory or disk, by size): the same bytes again.
    await pool(casesFor('forward', FEW_SIZES), (k) => fetchCase(k, 2));
    // The gateway's warnings say why, when a case failed.
    if (failures.length > 0) console.log(gw.child.output().split('\n').filter((l) => /"level":[4-6]0/.test(l)).join('\n'));
    expect(failures).toEqual([]);
    // The origin closes kept-alive connections after 1–1.5 s idle; the last ones are idle now.
    for (let i = 0; i < 50 && origin.idleCloses() === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(origin.idleCloses()).toBeGreaterThan(0);
    expect(origin.dropped()).toBeGreaterThan(0);
  });

  it('the same through Python’s http.server (HTTP/1.0, closes after every body)', async () => {
    for (const size of python.sizes) {
      for (const [target, headers] of [
        [`${python.url}/f${size}`, {}],
        [`/f${size}`, { host: 'py' }],
      ] as const) {
        const r = await send(gw.url, target, { headers });
        expect(r.status, `${target}`).toBe(200);
        expect(sha256(r.body), `${target} (${r.body.length} bytes)`).toBe(sha256(rawBody(size)));
      }
    }
  });

  it('lost no worker on the way', async () => {
    expect(gw.child.proc.exitCode).toBeNull();
    const metrics = (await send(gw.url, '/metrics')).body.toString();
    expect(metrics).toMatch(/^estuary_gateway_worker_restarts_total 0$/m);
    expect(gw.child.output()).not.toMatch(/gateway worker crashed|worker exited/);
  });
});
