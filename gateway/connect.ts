// CONNECT tunnels (for https:// through the proxy): allowed destinations and ports only, bytes
// copied both ways, nothing cached. Refusals are 403 with Proxy-Status, like every other refusal.

import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from '../lib/log.ts';
import type { ClientAcl, DestAcl } from './acl.ts';
import { classifyError } from './upstream.ts';
import { proxyStatus } from './proxy/respond.ts';

export interface TunnelDeps {
  readonly clientAcl: ClientAcl;
  readonly destAcl: DestAcl;
  readonly ports: readonly number[];
  readonly connectTimeoutMs: number;
  readonly log: Logger;
}

function refuse(socket: Duplex, status: number, reason: string, error: string, message: string): void {
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nProxy-Status: ${proxyStatus(error, message)}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
  );
}

export function handleConnect(deps: TunnelDeps, req: IncomingMessage, client: Duplex, head: Buffer): void {
  client.on('error', () => undefined);
  if (!deps.clientAcl.allows(req.socket.remoteAddress)) {
    refuse(client, 403, 'Forbidden', 'http_request_denied', 'client address not in the allow-list');
    return;
  }
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(req.url ?? '');
  if (!m) {
    refuse(client, 400, 'Bad Request', 'http_request_error', 'CONNECT needs host:port');
    return;
  }
  const host = m[1]!.replace(/^\[|\]$/g, '');
  const port = Number(m[2]);
  if (!deps.ports.includes(port) || !deps.destAcl.allows(host, port)) {
    refuse(client, 403, 'Forbidden', 'destination_ip_prohibited', `CONNECT to ${req.url} is not allowed`);
    return;
  }
  const upstream: Socket = connect({ host, port });
  const timer = setTimeout(
    () => upstream.destroy(Object.assign(new Error('connect timeout'), { code: 'UND_ERR_CONNECT_TIMEOUT' })),
    deps.connectTimeoutMs,
  );
  let connected = false;
  upstream.once('connect', () => {
    connected = true;
    clearTimeout(timer);
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  });
  upstream.on('error', (err) => {
    clearTimeout(timer);
    const f = classifyError(err);
    deps.log.warn({ target: req.url, reason: f.proxyError }, 'CONNECT failed');
    if (!connected) {
      refuse(client, f.status, f.status === 504 ? 'Gateway Timeout' : 'Bad Gateway', f.proxyError, f.message);
    } else client.destroy();
  });
  client.on('close', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
}
