// Who gets a connection, decided when it is accepted, before any header is parsed: the
// primary's hand-over in a worker, --allow-client (it covers every path: metrics, summary and
// the admin API say what the site caches), and --max-connections within the open-files limit.
// An admitted connection gets its send buffer (send-buffer.ts) and goes to the front reader, or
// straight to node:http.

import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../lib/log.ts';
import type { ClientAcl } from './acl.ts';
import type { Intake } from './cluster/intake.ts';
import { connectionCap, softNofile } from './fd-limit.ts';
import type { FrontReader } from './front-reader.ts';
import { OVERLOADED, REFUSAL, refuse, Throttle } from './refusals.ts';
import { applySendBuffer, type SendBufferSetting } from './send-buffer.ts';

export interface Admission {
  readonly clientAcl: ClientAcl;
  readonly maxConnections: number;
  readonly sendBuffer: SendBufferSetting;
  /** Set in a worker: only connections the primary handed over are served. */
  readonly intake?: Intake;
  readonly front?: FrontReader;
  readonly log: Logger;
}

/** Puts the checks in front of node:http's own 'connection' listener of `server`. */
export function admitConnections(server: Server, a: Admission): void {
  let open = 0;
  const nofile = softNofile();
  const maxConnections = connectionCap(a.maxConnections, nofile);
  if (maxConnections < a.maxConnections) {
    a.log.warn(
      { maxConnections: a.maxConnections, openFilesLimit: nofile, cap: maxConnections },
      `--max-connections ${a.maxConnections} is more than the open-files limit allows (ulimit -n ${nofile}); ` +
        `answering 503 past ${maxConnections} connections; raise the limit (LimitNOFILE= in systemd) to allow more`,
    );
  }
  const overloadLog = new Throttle(10_000);
  // node:http's own listener is called here, after the checks, or by the front reader at the
  // connection's first request it does not answer itself.
  const httpConnection = server.listeners('connection')[0] as (socket: Socket) => void;
  server.removeListener('connection', httpConnection);
  server.on('connection', (socket: Socket) => {
    const toHttp = () => httpConnection.call(server, socket);
    if (a.intake && !a.intake.handed(socket)) return socket.destroy();
    if (!a.clientAcl.allows(socket.remoteAddress)) {
      a.log.info({ client: socket.remoteAddress }, 'refused a client not in --allow-client');
      toHttp();
      return refuse(socket, REFUSAL);
    }
    if (open >= maxConnections) {
      overloadLog.note(() => a.log.warn({ open, max: maxConnections }, 'connection limit reached; refusing clients (--max-connections, open-files limit)'));
      toHttp();
      return refuse(socket, OVERLOADED, maxConnections);
    }
    open++;
    socket.once('close', () => open--);
    applySendBuffer(socket, a.sendBuffer);
    if (a.front) a.front.attach(socket, toHttp);
    else toHttp();
  });
}
