// The front reader: reads each connection before node:http does, answers plain reads of fresh
// objects held in memory itself (proxy/plain-hit.ts), and hands every other request to node:http
// on the same connection. Most of what a small hit costs in Node's server is its own objects (the
// request, its headers, the response and their events); a hit answered here costs a parse of the
// head and one write.
//
// A connection is in one of three states:
//   front    the reader parses heads (http/request-head.ts) and answers plain hits;
//   waiting  one complete request without a body was given to node:http; the bytes behind it wait
//            until its answer has been written, so answers leave in request order;
//   http     node:http reads the connection from here on (a body, an upgrade, a head the reader
//            will not judge, or one that arrived in pieces), as if the reader had never been.
// node:http gets the connection at its first request, not at accept: its header timer starts when
// it is given a connection and would otherwise cut a connection the reader keeps busy. It reads
// from our 'data' listener (adding one is Node's documented way to take a socket back from its
// native parser), and only the bytes the reader passes it.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../lib/log.ts';
import { readRequestHead, type RequestHead } from './http/request-head.ts';

type PlainHead = Extract<RequestHead, { kind: 'plain' }>;

export interface FrontDeps {
  /** The answer's bytes for a plain read, already counted; undefined leaves it to node:http. */
  readonly answer: (head: PlainHead, socket: Socket) => readonly Buffer[] | undefined;
  /** node:http's limit on a request head: a longer one goes to node:http, which answers 431. */
  readonly maxHeadBytes: number;
  /** How long a connection may sit idle in front (node:http's keep-alive timeout, with its slack). */
  readonly idleMs: number;
  /** --headers-timeout: how long a new connection may take to send its first head. */
  readonly headersTimeoutMs: number;
  /** Answers a connection that sent no complete head within headersTimeoutMs (408), and closes it. */
  readonly onSlowHead: (socket: Socket) => void;
  readonly log: Logger;
}

/** Bytes that may wait behind an answer still being written before the socket stops reading. */
const QUEUED_MAX = 64 * 1024;

type Feed = (chunk: Buffer) => void;

const EMPTY = Buffer.alloc(0);

class Connection {
  state: 'front' | 'waiting' | 'http' = 'front';
  /** node:http's data listener, once node:http has been given the connection. */
  #feed?: Feed;
  /** Bytes read and not yet answered nor passed on. */
  #pending?: Buffer;
  /** An answer is waiting for the socket to drain. */
  #blocked = false;
  /** The client sent FIN; once everything before it is answered, the connection ends. */
  #ended = false;
  /** A complete head has arrived: the idle limit, not the header timeout, applies from then. */
  #spoke = false;
  /** The answer to the request handed over in `waiting`, once node:http made it. */
  #current?: ServerResponse;
  readonly #socket: Socket;
  readonly #toHttp: () => void;
  readonly #d: FrontDeps;

  constructor(socket: Socket, toHttp: () => void, d: FrontDeps) {
    this.#socket = socket;
    this.#toHttp = toHttp;
    this.#d = d;
    socket.on('data', this.#onData);
    socket.on('end', this.#onEnd);
    socket.on('error', this.#onError);
    socket.on('timeout', this.#onTimeout);
    // As node:http does from accept: a connection that never sends a whole head is answered 408.
    socket.setTimeout(Math.min(d.headersTimeoutMs, d.idleMs));
  }

  // Not called in `http`: node:http's own listener reads the socket then (#forGood).
  readonly #onData = (chunk: Buffer): void => {
    this.#pending = this.#pending ? Buffer.concat([this.#pending, chunk]) : chunk;
    if (this.state === 'front' && !this.#blocked) this.#run();
    else if (this.#pending.length > QUEUED_MAX) this.#socket.pause();
  };

  readonly #onEnd = (): void => {
    this.#ended = true;
    // node:http, once given the connection, ends it itself (its 'end' listener).
    if (this.#feed === undefined && this.#pending === undefined && !this.#blocked) this.#socket.end();
  };

  readonly #onError = (): void => {
    this.#socket.destroy();
  };

  readonly #onTimeout = (): void => {
    if (this.state !== 'front') return;
    if (this.#spoke) this.#socket.destroy();
    else this.#d.onSlowHead(this.#socket);
  };

  /** Answers or passes on every complete head pending, in order. */
  #run(): void {
    const socket = this.#socket;
    const buf = this.#pending!;
    this.#pending = undefined;
    let pos = 0;
    while (pos < buf.length) {
      if (!socket.writable) return;
      const head = readRequestHead(buf, pos, this.#d.maxHeadBytes);
      // A head in pieces: node:http's header timer then bounds a client that never finishes it.
      if (head.kind === 'partial' || head.kind === 'opaque') return this.#forGood(buf.subarray(pos));
      if (!this.#spoke) {
        this.#spoke = true;
        socket.setTimeout(this.#d.idleMs);
      }
      if (head.kind === 'plain') {
        const out = this.#answer(head);
        if (out) {
          pos = head.end;
          if (this.#write(out)) continue;
          this.#blocked = true;
          if (pos < buf.length) this.#pending = buf.subarray(pos);
          socket.once('drain', this.#onDrain);
          return;
        }
      }
      if (head.end < buf.length) this.#pending = buf.subarray(head.end);
      return this.#handOne(buf.subarray(pos, head.end));
    }
    if (this.#ended && this.#feed === undefined) socket.end();
  }

  readonly #onDrain = (): void => {
    this.#blocked = false;
    this.#socket.resume();
    if (this.state !== 'front') return;
    if (this.#pending) this.#run();
    else if (this.#ended && this.#feed === undefined) this.#socket.end();
  };

  #answer(head: PlainHead): readonly Buffer[] | undefined {
    try {
      return this.#d.answer(head, this.#socket);
    } catch (err) {
      // node:http's path answers it instead, and says what went wrong there if it fails too.
      this.#d.log.error({ err, url: head.target }, 'internal error answering a plain hit; handing it to the full path');
      return undefined;
    }
  }

  #write(out: readonly Buffer[]): boolean {
    const socket = this.#socket;
    if (out.length === 1) return socket.write(out[0]!);
    socket.cork();
    for (let i = 0; i < out.length - 1; i++) socket.write(out[i]!);
    const ok = socket.write(out[out.length - 1]!);
    socket.uncork();
    return ok;
  }

  /** Gives node:http the connection, reading only what this reader passes it. */
  #attach(): Feed {
    if (this.#feed) return this.#feed;
    const socket = this.#socket;
    const before = new Set(socket.listeners('data'));
    this.#toHttp();
    const feed = socket.listeners('data').find((l) => !before.has(l)) as Feed | undefined;
    if (!feed) throw new Error('node:http added no data listener to a connection it was given');
    socket.removeListener('data', feed);
    // Re-added through node:http's wrapper, which takes the socket back from its native parser.
    socket.removeListener('data', this.#onData);
    socket.on('data', this.#onData);
    this.#feed = feed;
    return feed;
  }

  /** node:http answers this one request; the reader resumes once its answer is written. */
  #handOne(head: Buffer): void {
    const feed = this.#attach();
    this.state = 'waiting';
    this.#current = undefined;
    this.#socket.setTimeout(0);
    feed(head);
    if (this.#current) return;
    // A head node:http refused: its error handler answered and is closing the connection.
    if (!this.#socket.writable) this.#pending = undefined;
    this.#forGood(this.#pending ?? EMPTY);
  }

  /** Called for every request node:http emits on this connection. */
  started(res: ServerResponse): void {
    if (this.state !== 'waiting' || this.#current) return;
    this.#current = res;
    const done = () => {
      if (this.#current === res) this.#resume();
    };
    res.once('finish', done);
    res.once('close', done);
  }

  #resume(): void {
    this.#current = undefined;
    const socket = this.#socket;
    // An answer that closes the connection (or a cut one): nothing more is read.
    if (socket.destroyed || socket.writableEnded) return;
    this.state = 'front';
    socket.setTimeout(this.#d.idleMs);
    socket.resume();
    if (this.#pending) this.#run();
  }

  /** From here node:http reads everything: first `rest`, then the socket. */
  #forGood(rest: Buffer): void {
    const feed = this.#attach();
    const socket = this.#socket;
    this.state = 'http';
    this.#pending = undefined;
    socket.setTimeout(0);
    socket.removeListener('data', this.#onData);
    socket.removeListener('timeout', this.#onTimeout);
    socket.on('data', feed);
    socket.resume();
    if (rest.length > 0) feed(rest);
  }
}

export class FrontReader {
  readonly #d: FrontDeps;
  readonly #connections = new Map<Socket, Connection>();

  constructor(deps: FrontDeps) {
    this.#d = deps;
  }

  /** Takes a new connection; `toHttp` gives it to node:http (its 'connection' listener). */
  attach(socket: Socket, toHttp: () => void): void {
    this.#connections.set(socket, new Connection(socket, toHttp, this.#d));
    socket.once('close', () => this.#connections.delete(socket));
  }

  /** To be called for every request node:http emits: a handed-over request's answer resumes its connection. */
  started(req: IncomingMessage, res: ServerResponse): void {
    this.#connections.get(req.socket)?.started(res);
  }

  /** Closes the connections idle in front (node:http closes those it reads). */
  closeIdle(): void {
    for (const [socket, c] of this.#connections) if (c.state === 'front') socket.destroy();
  }

  /** Closes every connection still read here. */
  closeAll(): void {
    for (const [socket, c] of this.#connections) if (c.state !== 'http') socket.destroy();
  }
}
