// Many client connections against the process's open-files limit. A gateway started where the
// soft limit is low (1024 is the usual default; 256 here to keep the test small) with the default
// --max-connections (10,000 per worker) cannot reach that bound: the client beyond the limit must
// still be told something (the 503 + Retry-After + Proxy-Status that --max-connections promises),
// and the log must name the cause, not only Node's SentHandleNotReceivedWarning.

import net from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { onTeardown } from '../../helpers/cleanup.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { freePort, rawOrigin, rawRequest, sleep } from './gateway-lib.ts';

describe('client connections beyond the open-files limit', () => {
  it('the next client gets an answer, and the log says why', async () => {
    const origin = await rawOrigin((s) => s.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'));
    const port = await freePort();
    const estuary = join(import.meta.dirname, '..', '..', '..', 'bin', 'estuary.js');
    const gw = startChild('sh', ['-c', `ulimit -n 256 && exec "$0" "$@"`, NODE, estuary, 'gateway',
      '--listen', `127.0.0.1:${port}`, '--allow-dest', '@loopback', '--cache-dir', await tempDir('atk-gw-'), '--log-format', 'json']);
    await gw.waitFor(/gateway listening/, 30_000);
    const held: net.Socket[] = [];
    onTeardown(() => held.forEach((s) => s.destroy()));
    for (let i = 0; i < 300; i++) {
      const s = net.connect(port, '127.0.0.1', () => s.write('GET http://127.0.0.1:1/ HTTP/1.1\r\n'));
      s.on('error', () => {});
      held.push(s);
    }
    await sleep(3000);
    const r = await rawRequest(port, `GET http://127.0.0.1:${origin}/x HTTP/1.1\r\nHost: 127.0.0.1:${origin}\r\nConnection: close\r\n\r\n`, 10_000);
    expect([200, 503], `reply ${JSON.stringify(r.head)} error ${r.error}`).toContain(r.status);
    expect(gw.output()).toMatch(/EMFILE|open files|file descriptors|ulimit/i);
  });
});
