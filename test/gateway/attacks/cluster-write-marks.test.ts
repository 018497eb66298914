// Attack: a second user evicts the gateway's memory of a write. Each worker remembers, per key,
// when it was last written through the gateway (at most 100,000 keys), so that a fetch begun
// before the write is not stored. Any client can make that memory forget: DELETEs of keys that do
// not exist are answered 204 by the origin and each one is remembered as a write.
//
// docs/CACHING.md ("Unsafe methods"): "A fetch of an invalidated key that was already under way
// when the invalidation happened (in this worker or another) still answers its readers, but is
// not stored: it may carry the version from before the write." Expected: that holds whatever
// other clients write meanwhile; the version the write replaced is never stored and served.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startOrigin } from '../helpers/origin.ts';
import { clusterGateway, connsOnWorkers, tempDir, workerPids } from './cluster-lib.ts';

afterAll(runTeardowns);

describe('attack: 100,000 throw-away writes make the gateway forget a real one', () => {
  it('a fetch begun before an acknowledged PUT is not stored, even after many other keys were written', async () => {
    let version = 0;
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    const origin = await startOrigin();
    origin.server.removeAllListeners('request');
    origin.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const path = req.url ?? '/';
      if (path !== '/victim') {
        req.resume();
        res.writeHead(204);
        res.end();
        return;
      }
      if (req.method === 'PUT') {
        req.resume();
        req.on('end', () => {
          version++;
          res.writeHead(204);
          res.end();
        });
        return;
      }
      const body = `version ${version}`.padEnd(4096, '.');
      res.writeHead(200, { 'cache-control': 'max-age=600', etag: `"v${version}"`, 'content-length': body.length });
      res.write(body.slice(0, 100));
      void released.then(() => res.end(body.slice(100)));
    });
    // The held body must outlast the other client's burst: the upstream may pause for 2 minutes.
    const gw = await clusterGateway(origin.url, 2, ['--idle-timeout', '2m']);
    const [f, w] = workerPids(gw.child.pid) as [number, number];
    const filler = (await connsOnWorkers(gw.port, [f])).get(f)!;
    const writer = (await connsOnWorkers(gw.port, [w])).get(w)!;
    const early = filler.request('GET', '/victim', {}, undefined, 60_000);
    await new Promise((r) => setTimeout(r, 300));
    expect((await writer.request('PUT', '/victim', {}, 'new')).status).toBe(204);
    // Another client: DELETE /junk/<n> for different n, as fast as it can.
    const dir = tempDir();
    const script = join(dir, 'junk.lua');
    // Pipelined 16 deep, so the client costs little next to the gateway.
    writeFileSync(
      script,
      [
        'counter = 0',
        'init = function(args) math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16)) end',
        'request = function()',
        '  local r = {}',
        '  for i = 1, 16 do',
        '    counter = counter + 1',
        '    r[i] = wrk.format("DELETE", "/junk/" .. counter .. "-" .. math.random(1, 1e9))',
        '  end',
        '  return table.concat(r)',
        'end',
        '',
      ].join('\n'),
    );
    // Asynchronously: the origin runs in this process. 8 s bursts until 110,000 were answered.
    let done = 0;
    for (let run = 0; run < 5 && done < 110_000; run++) {
      const { stdout } = await promisify(execFile)('wrk', ['-t2', '-c16', '-d8s', '-s', script, `http://127.0.0.1:${gw.port}/`], { encoding: 'utf8', timeout: 20_000 });
      done += Number(/(\d+) requests in/.exec(stdout)?.[1] ?? 0);
    }
    release();
    expect((await early).body.subarray(0, 9).toString()).toBe('version 0');
    await new Promise((r) => setTimeout(r, 300));
    const after = await writer.request('GET', '/victim');
    expect(after.body.subarray(0, 9).toString(), `after ${done} junk DELETEs: ${after.headers['cache-status']}`).toBe('version 1');
  }, 75_000);
});
