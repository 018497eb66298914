// Whether an address can be listened on, asked before a role hands its socket to others. The
// workers of a multi-worker gateway bind through their primary, and a worker that cannot bind
// only tells the primary that it exited; asking first lets the command end with the role's own
// one-line error. Binding and closing at once leaves nothing behind (no connection, so no
// TIME_WAIT), and the worker binds with SO_REUSEADDR like every Node server.

import { createServer } from 'node:net';

/** Resolves when `host:port` can be bound now; rejects with the bind error (EADDRINUSE, EACCES…). */
export function probeListen(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve()));
  });
}
