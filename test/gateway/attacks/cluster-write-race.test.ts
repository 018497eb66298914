// Attack: a write acknowledged by one worker, then a read on a keep-alive connection that another
// worker holds (a client with a connection pool: undici, the AWS SDKs, wrk, CVMFS's own pool).
//
// docs/STAGING.md / docs/CACHING.md: a write through the gateway is seen by every later read; an
// unsafe method invalidates the stored entry (RFC 9111 §4.4). Expected: once the PUT's answer has
// reached the client, no read through the gateway, on any worker, answers the version it replaced.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startOrigin } from '../helpers/origin.ts';
import { clusterGateway, connsOnWorkers, workerPids } from './cluster-lib.ts';

afterAll(runTeardowns);

/** An origin whose /obj is version N until a PUT makes it N+1; every version is fresh for 10 min. */
async function versionedOrigin() {
  let version = 0;
  const origin = await startOrigin();
  origin.route('/obj', (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'PUT') {
      req.resume();
      req.on('end', () => {
        version++;
        res.writeHead(204, { etag: `"v${version}"` });
        res.end();
      });
      return;
    }
    const body = `version ${version}`;
    res.writeHead(200, { 'cache-control': 'max-age=600', etag: `"v${version}"`, 'content-length': Buffer.byteLength(body) });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  return { origin, version: () => version };
}

describe('attack: a write acknowledged on one worker, the next read on another', () => {
  it('a GET on another worker\'s keep-alive connection right after the PUT was answered never gets the replaced version', async () => {
    const { origin, version } = await versionedOrigin();
    const gw = await clusterGateway(origin.url, 2);
    const [a, b] = [...(await connsOnWorkers(gw.port, workerPids(gw.child.pid))).values()];
    const stale: string[] = [];
    for (let i = 0; i < 150; i++) {
      // Both workers hold the current version.
      await a!.request('GET', '/obj');
      await b!.request('GET', '/obj');
      const put = await a!.request('PUT', '/obj', {}, 'new');
      expect(put.status).toBe(204);
      // The PUT has been answered: the read that follows must see it.
      const got = await b!.request('GET', '/obj');
      if (got.body.toString() !== `version ${version()}`) stale.push(`round ${i}: got "${got.body}" after the PUT made version ${version()} (${got.headers['cache-status']})`);
    }
    expect(stale).toEqual([]);
  }, 60_000);

  it('a conditional GET on another worker right after the PUT is not answered 304 for the replaced ETag', async () => {
    const { origin, version } = await versionedOrigin();
    const gw = await clusterGateway(origin.url, 2);
    const [a, b] = [...(await connsOnWorkers(gw.port, workerPids(gw.child.pid))).values()];
    const wrong: string[] = [];
    for (let i = 0; i < 150; i++) {
      await a!.request('GET', '/obj');
      const old = (await b!.request('GET', '/obj')).headers.etag!;
      await a!.request('PUT', '/obj', {}, 'new');
      const got = await b!.request('GET', '/obj', { 'if-none-match': old });
      if (got.status === 304) wrong.push(`round ${i}: 304 for ${old} after the PUT made version ${version()}`);
    }
    expect(wrong).toEqual([]);
  }, 60_000);
});

/** Like versionedOrigin, but a GET sends half its body, then waits `holdMs` before the rest. */
async function slowVersionedOrigin(holdMs: number) {
  let version = 0;
  const origin = await startOrigin();
  origin.route('/slow', (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'PUT') {
      req.resume();
      req.on('end', () => {
        version++;
        res.writeHead(204, { etag: `"v${version}"` });
        res.end();
      });
      return;
    }
    const body = `version ${version} `.padEnd(64 * 1024, '.');
    res.writeHead(200, { 'cache-control': 'max-age=600', etag: `"v${version}"`, 'content-length': body.length });
    res.write(body.slice(0, 1000));
    setTimeout(() => res.end(body.slice(1000)), holdMs);
  });
  return { origin, version: () => version };
}

describe('attack: a read that starts after a write joins a fetch started before it', () => {
  // Worker F fetches version 0 slowly; worker W acknowledges a PUT meanwhile; then a GET is sent.
  for (const readOn of ['the fetching worker', 'the worker that took the write'] as const) {
    it(`a GET sent after the PUT's 204 (on ${readOn}) does not get the body of a fetch that began before the PUT`, async () => {
      const { origin } = await slowVersionedOrigin(1500);
      const gw = await clusterGateway(origin.url, 2);
      const [f, w] = workerPids(gw.child.pid) as [number, number];
      const filler = (await connsOnWorkers(gw.port, [f])).get(f)!;
      const writer = (await connsOnWorkers(gw.port, [w])).get(w)!;
      const readerPid = readOn === 'the fetching worker' ? f : w;
      const reader = (await connsOnWorkers(gw.port, [readerPid])).get(readerPid)!;
      // A miss starts the fetch of version 0, whose body takes 1.5 s to arrive.
      const early = filler.request('GET', '/slow');
      await new Promise((r) => setTimeout(r, 300));
      const put = await writer.request('PUT', '/slow', {}, 'new');
      expect(put.status).toBe(204);
      // Acknowledged: this read starts after the write's answer.
      const after = await reader.request('GET', '/slow');
      expect(after.body.subarray(0, 10).toString(), `Cache-Status: ${after.headers['cache-status']}`).toBe('version 1 ');
      expect((await early).status).toBe(200);
    }, 30_000);
  }
});
