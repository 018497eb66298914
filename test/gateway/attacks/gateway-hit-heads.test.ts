// Memory hits are answered from a head built once per entry and second (gateway/proxy/heads.ts).
// Regression: two Vary variants of one URL never share a head (each answer's Content-Length and
// body are its own variant's), HEAD and GET agree, and Age moves on across second boundaries
// (docs/CACHING.md: Age per RFC 9111 §5.1).

import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp.ts';
import { type Gateway, rawOrigin, rawRequest, sleep, startGateway } from './gateway-lib.ts';

let gw: Gateway;
let origin: number;

beforeAll(async () => {
  origin = await rawOrigin((s, head) => {
    const lang = /accept-language: (\w+)/i.exec(head)?.[1] ?? 'none';
    const body = lang === 'de' ? 'guten tag, lange antwort' : 'hi';
    s.end(
      `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nCache-Control: max-age=600\r\nVary: Accept-Language\r\nContent-Language: ${lang}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  gw = await startGateway(['--allow-dest', '@loopback', '--cache-dir', await tempDir('atk-heads-')]);
});

function get(lang: string, method = 'GET') {
  const url = `http://127.0.0.1:${origin}/v`;
  return rawRequest(
    gw.port,
    `${method} ${url} HTTP/1.1\r\nHost: 127.0.0.1:${origin}\r\nAccept-Language: ${lang}\r\nConnection: close\r\n\r\n`,
  );
}

const header = (head: string, name: string) => new RegExp(`^${name}: (.*)$`, 'im').exec(head)?.[1];

describe('memory hit heads', () => {
  it('keeps Vary variants, HEAD and Age apart', async () => {
    await get('de');
    await get('en');
    for (let round = 0; round < 3; round++) {
      for (const lang of ['de', 'en']) {
        const want = lang === 'de' ? 'guten tag, lange antwort' : 'hi';
        const r = await get(lang);
        expect(r.body.toString()).toBe(want);
        expect(header(r.head, 'content-length')).toBe(String(want.length));
        expect(header(r.head, 'content-language')).toBe(lang);
        expect(header(r.head, 'cache-status')).toMatch(/hit/);
        const h = await get(lang, 'HEAD');
        expect(header(h.head, 'content-length')).toBe(String(want.length));
        expect(header(h.head, 'content-language')).toBe(lang);
        expect(h.body.length).toBe(0);
      }
      if (round < 2) await sleep(1100);
    }
    const r = await get('de');
    expect(Number(header(r.head, 'age'))).toBeGreaterThanOrEqual(2);
  }, 20_000);
});
