// Shared pieces for the --send-buffer attacks (gwsndbuf-*.test.ts): the kernel's view of the
// gateway's end of a connection (`ss -tm`, skmem tb = sk_sndbuf), and a raw HTTP/1.1 client that
// reads pipelined answers by Content-Length so every byte can be compared.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { NEAR_SEND_BUFFER, readWmemMax } from '../../../gateway/send-buffer.ts';

/** sk_sndbuf the kernel keeps for SO_SNDBUF `bytes`: doubled, after capping at net.core.wmem_max. */
export const kernelTb = (bytes: number): number => 2 * Math.min(bytes, readWmemMax() ?? bytes);
/** What --send-buffer auto gives a near connection, as `ss` shows it. */
export const NEAR_TB = kernelTb(NEAR_SEND_BUFFER);

export const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** Deterministic pseudo-random bytes (so a shifted or repeated chunk cannot compare equal). */
export function noise(n: number, seed = 1): Buffer {
  const b = Buffer.alloc(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    if (i + 4 <= n) b.writeUInt32LE(x, i);
    else for (let j = i; j < n; j++) b[j] = (x >>> ((j - i) * 8)) & 0xff;
  }
  return b;
}

/** sk_sndbuf (`tb`) of the TCP socket bound to local port `sport` talking to remote port `dport`. */
export function sendBufferOf(sport: number, dport: number, netns?: string): number {
  const args = ['-tmHn', 'state', 'established', `( sport = :${sport} and dport = :${dport} )`];
  const out = netns
    ? execFileSync('ip', ['netns', 'exec', netns, 'ss', ...args], { encoding: 'utf8' })
    : execFileSync('ss', args, { encoding: 'utf8' });
  const m = /tb(\d+)/.exec(out);
  if (!m) throw new Error(`ss found no such connection (${sport} -> ${dport}): ${JSON.stringify(out)}`);
  return Number(m[1]);
}

/** Every tb of established sockets whose local port is `sport`. */
export function allSendBuffers(sport: number): number[] {
  const out = execFileSync('ss', ['-tmHn', 'state', 'established', `( sport = :${sport} )`], {
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
  });
  return [...out.matchAll(/tb(\d+)/g)].map((m) => Number(m[1]));
}

export interface Answer {
  status: number;
  head: string;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * Reads `count` answers from `socket` (answers to HEAD requests must be flagged in `heads`, they
 * carry a Content-Length but no body). Every answer must carry Content-Length.
 */
export function readAnswers(socket: Socket, count: number, heads: boolean[] = [], timeoutMs = 25_000): Promise<Answer[]> {
  return new Promise((resolve, reject) => {
    const answers: Answer[] = [];
    let buf = Buffer.alloc(0);
    // chunks not yet joined into buf (joining each small chunk into a big buffer is quadratic)
    let parts: Buffer[] = [];
    let partsLen = 0;
    let need = 0;
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`timed out after ${answers.length}/${count} answers, ${buf.length + partsLen} bytes pending`));
    }, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.off('error', onError);
    };
    const onError = (e: Error) => {
      cleanup();
      reject(e);
    };
    const onClose = () => {
      cleanup();
      reject(new Error(`closed after ${answers.length}/${count} answers, ${buf.length} bytes pending`));
    };
    const step = () => {
      for (;;) {
        if (answers.length === count) {
          cleanup();
          return resolve(answers);
        }
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.subarray(0, end).toString('latin1');
        const lines = head.split('\r\n');
        const status = Number(lines[0]!.split(' ')[1]);
        const headers: Record<string, string> = {};
        for (const l of lines.slice(1)) {
          const i = l.indexOf(':');
          headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
        }
        const isHead = heads[answers.length] === true;
        if (headers['transfer-encoding']) throw new Error(`chunked answer: ${head}`);
        const len = isHead || status === 304 || status === 204 ? 0 : Number(headers['content-length'] ?? NaN);
        if (!Number.isFinite(len)) {
          cleanup();
          return reject(new Error(`no content-length: ${head}`));
        }
        if (buf.length < end + 4 + len) {
          need = end + 4 + len;
          return;
        }
        need = 0;
        answers.push({ status, head, headers, body: Buffer.from(buf.subarray(end + 4, end + 4 + len)) });
        buf = buf.subarray(end + 4 + len);
      }
    };
    const onData = (d: Buffer) => {
      parts.push(d);
      partsLen += d.length;
      if (need && buf.length + partsLen < need) return;
      buf = Buffer.concat([buf, ...parts]);
      parts = [];
      partsLen = 0;
      try {
        step();
      } catch (e) {
        onError(e as Error);
      }
    };
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.once('error', onError);
  });
}

export async function open(port: number, host = '127.0.0.1'): Promise<Socket> {
  const s = connect(port, host);
  await new Promise<void>((resolve, reject) => {
    s.once('connect', resolve);
    s.once('error', reject);
  });
  return s;
}

export function get(path: string, extra = ''): string {
  return `GET ${path} HTTP/1.1\r\nHost: x\r\n${extra}\r\n`;
}
