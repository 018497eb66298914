// Attack: revalidation answered 304 with a validator that is not the stored one, with --workers 2.
// The store changed between the fill and the revalidation, and the 304 comes from something that
// compared loosely (a second-level cache holding the new version, an origin comparing weakly):
// it names the new version's strong ETag.
//
// RFC 9111 §4.3.4: a 304's strong validator identifies which stored responses it updates; a stored
// response with another ETag is not the one it describes and must not be updated with it (nor
// served as that version). docs/CACHING.md ("Revalidation"): "a 304 is merged into the stored
// headers (RFC 9111 §3.2)". Expected: no worker ever answers the old body under the new ETag
// (which a client would then keep for good: its next If-None-Match "v1" gets 304).

import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startOrigin } from '../helpers/origin.ts';
import { clusterGateway, connsOnWorkers, workerPids } from './cluster-lib.ts';
import { sleep } from './gateway-lib.ts';

afterAll(runTeardowns);

describe('attack: a 304 naming another ETag than the stored response', () => {
  it('does not relabel the stored old body with the new ETag, on the worker that revalidated nor on the other', async () => {
    let version = 0;
    const origin = await startOrigin();
    origin.route('/r', (req: IncomingMessage, res: ServerResponse) => {
      const etag = `"v${version}"`;
      if (req.headers['if-none-match'] !== undefined) {
        // Loose comparison: any conditional request is told "not modified", with today's ETag.
        res.writeHead(304, { etag, 'cache-control': 'max-age=1' });
        res.end();
        return;
      }
      const body = `version ${version}`;
      res.writeHead(200, { etag, 'cache-control': 'max-age=1', 'content-length': body.length });
      res.end(body);
    });
    const gw = await clusterGateway(origin.url, 2);
    const [p1, p2] = workerPids(gw.child.pid) as [number, number];
    const conns = await connsOnWorkers(gw.port, [p1, p2]);
    const a = conns.get(p1)!;
    const b = conns.get(p2)!;
    expect((await a.request('GET', '/r')).body.toString()).toBe('version 0');
    version = 1;
    await sleep(2100);
    const seen: string[] = [];
    for (const [name, c] of [['revalidating worker', a], ['other worker', b]] as const) {
      const got = await c.request('GET', '/r');
      seen.push(`${name}: ${got.headers.etag} "${got.body}" (${got.headers['cache-status']})`);
    }
    const mislabelled = seen.filter((s) => s.includes('"v1"') && s.includes('"version 0"'));
    expect(mislabelled, seen.join('\n')).toEqual([]);
  }, 30_000);
});
