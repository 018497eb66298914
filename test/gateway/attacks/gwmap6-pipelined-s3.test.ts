// Attack: pipelined S3 requests on one connection mixing answers written from a mapping (plain
// GETs of a 2 MiB disk hit), HEADs, ranges, 304s, 412s and a miss, sent in one write.
// Expected: every answer in order, each with its own status and exactly its bytes (HEAD and 304
// without a body); the connection stays usable. Then 200 clients pipeline the same burst and
// stop reading; the worker's anonymous memory stays small (mapped pieces are file pages) and,
// once they are gone, estuary_gateway_disk_mapped_bytes is back to what one mapping holds.

import { readFileSync } from 'node:fs';
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { metric } from './disk-lib.ts';
import { pidsOnPort, sleep } from './gateway-lib.ts';
import { getObject, signedHeaders, startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct } from './s3-harness.ts';

afterAll(runTeardowns);

const MiB = 2 ** 20;
const text = (n: number, seed: string) => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);

function raw(gw: string, method: string, path: string, h: Record<string, string>, cred: Parameters<typeof signedHeaders>[1]): string {
  const all = signedHeaders(gw, cred, method, path, h);
  return `${method} ${path} HTTP/1.1\r\n${Object.entries(all).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`;
}

/** Parses `n` answers from `buf`; HEAD answers (by index) and 304/412-without-body rules as HTTP says. */
function parse(buf: Buffer, heads: Set<number>): { status: number; body: Buffer }[] {
  const out: { status: number; body: Buffer }[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const end = buf.indexOf('\r\n\r\n', pos);
    if (end < 0) break;
    const head = buf.subarray(pos, end).toString('latin1');
    const status = Number(head.split(' ')[1]);
    const len = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    const bodyLen = heads.has(out.length) || status === 304 ? 0 : len;
    if (/transfer-encoding: *chunked/i.test(head)) throw new Error(`chunked answer: ${head}`);
    out.push({ status, body: buf.subarray(end + 4, end + 4 + bodyLen) });
    pos = end + 4 + bodyLen;
  }
  return out;
}

describe('pipelined S3 requests over mapped answers', () => {
  it('are answered in order with their own bytes, and stalled bursts hold no memory', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const g = await startS3Gw(store);
    const cred = await g.issue(`${BUCKET}/run42/`);
    const key = `/${BUCKET}/run42/piped.bin`;
    const cold = `/${BUCKET}/run42/cold.bin`;
    const body = text(2 * MiB + 123, 'pipelined-mapped-body-');
    expect((await direct(store, 'PUT', key, body)).status).toBe(200);
    expect((await direct(store, 'PUT', cold, body.toUpperCase())).status).toBe(200);
    const first = await getObject(g.gw, cred, key);
    expect(first.complete).toBe(true);
    expect((await getObject(g.gw, cred, key)).complete).toBe(true);
    const etag = String(first.headers.etag);
    const burst = (): [string, Set<number>, (r: { status: number; body: Buffer }[]) => string[]] => {
      const reqs = [
        raw(g.gw, 'GET', key, {}, cred),
        raw(g.gw, 'HEAD', key, {}, cred),
        raw(g.gw, 'GET', key, { range: 'bytes=100-199' }, cred),
        raw(g.gw, 'GET', key, { 'if-none-match': etag }, cred),
        raw(g.gw, 'GET', key, { 'if-match': '"nope"' }, cred),
        raw(g.gw, 'GET', key, {}, cred),
        raw(g.gw, 'HEAD', key, {}, cred),
        raw(g.gw, 'GET', cold, {}, cred),
        raw(g.gw, 'GET', key, {}, cred),
      ];
      const check = (r: { status: number; body: Buffer }[]) => [
        `${r[0]?.status} ${r[0]?.body.toString() === body}`,
        `${r[1]?.status} ${r[1]?.body.length}`,
        `${r[2]?.status} ${r[2]?.body.toString() === body.slice(100, 200)}`,
        `${r[3]?.status}`,
        `${r[4]?.status}`,
        `${r[5]?.status} ${r[5]?.body.toString() === body}`,
        `${r[6]?.status} ${r[6]?.body.length}`,
        `${r[7]?.status} ${r[7]?.body.toString() === body.toUpperCase()}`,
        `${r[8]?.status} ${r[8]?.body.toString() === body}`,
      ];
      return [reqs.join(''), new Set([1, 6]), check];
    };
    const [text1, heads, check] = burst();
    const got = await new Promise<Buffer>((resolve) => {
      const chunks: Buffer[] = [];
      const s = net.connect(g.port, '127.0.0.1', () => s.write(text1));
      s.on('data', (c: Buffer) => chunks.push(c));
      setTimeout(() => { s.destroy(); resolve(Buffer.concat(chunks)); }, 4000);
    });
    expect(check(parse(got, heads))).toEqual(['200 true', '200 0', '206 true', '304', '412', '200 true', '200 0', '200 true', '200 true']);
    // 200 clients send the burst and read nothing.
    const pids = [g.child.pid, ...pidsOnPort(g.port)];
    const pid = pids[pids.length - 1]!;
    const anon = () => Number(/RssAnon:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
    const before = anon();
    const socks: net.Socket[] = [];
    for (let i = 0; i < 200; i++) {
      const s = net.connect(g.port, '127.0.0.1', () => s.write(burst()[0]));
      s.pause();
      s.on('error', () => undefined);
      socks.push(s);
    }
    await sleep(4000);
    const during = anon();
    for (const s of socks) s.destroy();
    await sleep(2000);
    const mapped = await metric(g.port, 'estuary_gateway_disk_mapped_bytes');
    expect({ anonGrowthMiB: Math.round((during - before) / MiB) < 100, mappedAfter: mapped <= 2 * (2 * MiB + 4096) }).toEqual({ anonGrowthMiB: true, mappedAfter: true });
  }, 90_000);
});
