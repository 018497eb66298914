// The worker side of gateway/cluster/listener.ts: takes the connections the primary hands over
// and gives them to the HTTP server as if it had accepted them. The server also listens on a
// socket file of its own in a private directory, because Node's HTTP server runs its header and
// request timers (the slow-client limits) only while it listens; nothing else connects there,
// and a connection that did would be closed.

import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HAND_OVER, HAND_OVER_ACK, HAND_OVER_FRESH_MS, HAND_OVER_LATE, HAND_OVER_VERDICT } from './listener.ts';

export class Intake {
  readonly #handed = new WeakSet<Socket>();
  #open = 0;
  #dir?: string;

  /** A private path for the server to listen on. */
  async path(): Promise<string> {
    this.#dir = await mkdtemp(join(tmpdir(), 'estuary-gw-worker-'));
    return join(this.#dir, 'http.sock');
  }

  /** From now on, connections handed over by the primary go to `server`. */
  start(server: Server): void {
    /** Hand-overs read late, waiting for the primary's word on whether they are still this worker's. */
    const late = new Map<number, Socket>();
    const serve = (handle: Socket) => {
      this.#handed.add(handle);
      this.#open++;
      handle.once('close', () => this.#open--);
      server.emit('connection', handle);
    };
    process.on('message', (m: { t?: unknown; id?: unknown; at?: unknown; keep?: unknown } | null, handle: unknown) => {
      if (m?.t === HAND_OVER_VERDICT && typeof m.id === 'number') {
        const socket = late.get(m.id);
        late.delete(m.id);
        // Closing this copy of the descriptor leaves the others open.
        if (socket && m.keep === true) serve(unhold(socket));
        else socket?.destroy();
        return;
      }
      if (m?.t !== HAND_OVER || !(handle instanceof Socket) || typeof m.id !== 'number') return;
      if (typeof m.at === 'number' && Date.now() - m.at > HAND_OVER_FRESH_MS) {
        // This worker was stalled (frozen, or its event loop blocked): the primary may have given
        // the connection to another worker by now. It says which (HAND_OVER_VERDICT).
        late.set(m.id, hold(handle));
        if (process.connected) process.send?.({ t: HAND_OVER_LATE, id: m.id });
        else handle.destroy();
        return;
      }
      // The primary keeps its copy of the connection until it hears this.
      if (process.connected) process.send?.({ t: HAND_OVER_ACK, id: m.id });
      serve(handle);
    });
  }

  /** Whether `socket` came from the primary (every other connection is refused). */
  handed(socket: Socket): boolean {
    return this.#handed.has(socket);
  }

  /** Waits for the handed connections to end, closing each as soon as it is idle (`closeIdle`). */
  async drain(closeIdle: () => void, deadline?: AbortSignal): Promise<void> {
    while (this.#open > 0 && !deadline?.aborted) {
      closeIdle();
      await new Promise((r) => setTimeout(r, 50));
    }
    if (this.#dir) await rm(this.#dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** The part of a socket's native handle that starts and stops reading from the descriptor. */
interface ReadSwitch {
  reading: boolean;
  readStart(): number;
  readStop(): number;
}

/**
 * Stops `socket` reading until the primary's verdict. Node starts reading a socket received over
 * IPC at once, and every copy of a handed-over connection reads the same kernel buffer: a copy
 * that is then destroyed on the verdict would take the request's bytes with it, and the copy that
 * serves the connection (another worker's, or a later hand-over to this one) would wait for ever
 * on a request that never comes. The message is emitted on process.nextTick after the socket was
 * made, before the event loop polls, so no byte has been read yet.
 */
function hold(socket: Socket): Socket {
  const h = (socket as unknown as { _handle?: ReadSwitch | null })._handle;
  if (h?.reading) {
    h.reading = false;
    h.readStop();
  }
  return socket;
}

/** Lets a held socket read again, before the server is given it. */
function unhold(socket: Socket): Socket {
  const h = (socket as unknown as { _handle?: ReadSwitch | null })._handle;
  if (h && !h.reading && !socket.destroyed) {
    h.reading = true;
    if (h.readStart() !== 0) socket.destroy();
  }
  return socket;
}

