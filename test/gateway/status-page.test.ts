// The gateway's status page, from a real `estuary gateway` process: the numbers of real hits,
// misses and S3 requests appear; a failing upstream and a worker that died are said at the top;
// in reverse mode `/` still goes upstream; --allow-client covers the page too.

import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/tmp.ts';
import { send } from './helpers/client.ts';
import { startGatewayProcess } from './helpers/gateway.ts';
import { fixed, startOrigin } from './helpers/origin.ts';

/** A loopback port nothing listens on: taken, then released. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

const page = async (url: string, path = '/estuary/v1/status') => {
  const r = await send(url, path);
  return { status: r.status, type: String(r.headers['content-type']), html: r.body.toString() };
};
/** The text before the first section: where problems must be said. */
const top = (html: string) => html.slice(0, html.indexOf('<h2>'));

describe('gateway status page', () => {
  it('shows hits by tier, misses, S3 traffic and the lock holder over every worker, at / in forward mode', async () => {
    const origin = await startOrigin({ '/a/1': fixed('x'.repeat(3000), { 'cache-control': 'max-age=60' }) });
    const dir = await tempDir('estuary-gwpage-');
    await writeFile(join(dir, 'issuer.key'), 'status-page-issuer-key-0123456789abcdef');
    await writeFile(join(dir, 'keys.json'), JSON.stringify({ default: { accessKeyId: 'AK', secretAccessKey: 'SK', region: 'us-east-1' } }));
    const gw = await startGatewayProcess([
      '--allow-dest', '@loopback', '--cache-dir', join(dir, 'cache'), '--workers', '2',
      '--s3', `kek-data=${origin.url}`, '--s3-issuer-key-file', join(dir, 'issuer.key'), '--s3-credentials', join(dir, 'keys.json'),
    ]);
    expect((await send(gw.url, `${origin.url}/a/1`)).status).toBe(200);
    // Another worker learns of the stored object over IPC: a request racing that is one more miss.
    let misses = 1;
    while (misses < 5 && !/hit/.test(String((await send(gw.url, `${origin.url}/a/1`)).headers['cache-status']))) misses++;
    expect(misses).toBeLessThan(5);
    expect((await send(gw.url, '/kek-data/some/key')).status).toBe(403); // unsigned: refused, still S3 traffic
    const p = await page(gw.url, '/');
    expect(p.status).toBe(200);
    expect(p.type).toMatch(/text\/html/);
    expect(p.html).not.toMatch(/<script/i);
    expect(top(p.html)).toMatch(new RegExp(`✔ Serving: hit ratio ${Math.round(100 / (misses + 1))}% over \\d+ requests, 1 upstream answering`));
    // The hit may come from either worker's memory or the shared disk: the page counts both workers.
    const hits = (tier: string) => Number(new RegExp(`hits from ${tier}</td><td class="num">(\\d+)</td>`).exec(p.html)?.[1]);
    expect(hits('memory') + hits('disk')).toBe(1);
    expect(p.html).toContain(`misses (fetched upstream)</td><td class="num">${misses}</td>`);
    expect(p.html).toMatch(/<td>GET<\/td><td>4xx<\/td><td class="num">1<\/td>/);
    expect(p.html).toContain(`locked by process ${gw.child.pid}`);
    expect(p.html).toMatch(/✔ answering<\/td><td>@loopback/);
    expect(p.html).toContain('127.0.0.1'); // the object's URL among the largest
    expect(p.html).toMatch(/2 workers under a supervisor · 0 restarts/);
    expect((await page(gw.url)).html).toContain('hits from memory'); // same page at its own path
  });

  it('says a failing upstream at the top, and leaves / to the upstream in reverse mode', async () => {
    const gw = await startGatewayProcess(['--upstream', `stratum1=http://127.0.0.1:${await closedPort()}`]);
    const root = await send(gw.url, '/');
    expect(root.status).toBe(502); // forwarded, not the page
    const p = await page(gw.url);
    expect(top(p.html)).toMatch(/⚠ Upstream stratum1 is failing: connection refused.*\(last answer never\)/);
    expect(p.html).toMatch(/class="s-failing"><td>✖ failing<\/td><td>stratum1/);
  });

  it('marks the dead server of a ring that still answers through its other one', async () => {
    const origin = await startOrigin({ '/x': fixed('x', { 'cache-control': 'max-age=60' }) });
    const dead = `http://127.0.0.1:${await closedPort()}`;
    const gw = await startGatewayProcess(['--upstream', `stratum1=${dead},${origin.url}`]);
    expect((await send(gw.url, '/x')).status).toBe(200);
    const p = await page(gw.url);
    expect(top(p.html)).toContain('✔ Serving');
    expect(p.html).toContain(`✔ answering</td><td>stratum1<br><small><b>${dead} (failed lately, tried last)</b>, ${origin.url}</small>`);
  });

  it('says a worker death at the top and counts the restart', async () => {
    const gw = await startGatewayProcess(['--allow-dest', '@loopback']);
    const worker = Number(execFileSync('ps', ['-o', 'pid=', '--ppid', String(gw.child.pid)], { encoding: 'utf8' }).trim().split(/\s+/)[0]);
    process.kill(worker, 'SIGKILL');
    await gw.child.waitFor(/starting a new one/, 10_000);
    let html = '';
    for (let i = 0; i < 50 && !/1 restart /.test(html); i++) {
      html = await page(gw.url).then((p) => p.html, () => '');
      if (!/1 restart /.test(html)) await new Promise((r) => setTimeout(r, 200));
    }
    expect(top(html)).toMatch(/⚠ 1 worker death in the last 60 s: at 5 the gateway gives up/);
    expect(html).toMatch(/1 restart since start/);
  });

  it('refuses the page to clients outside --allow-client', async () => {
    const gw = await startGatewayProcess(['--allow-dest', '@loopback', '--allow-client', '10.0.0.0/8']);
    const r = await send(gw.url, '/');
    expect(r.status).toBe(403);
    expect(r.body.toString()).not.toContain('estuary gateway');
  });
});
