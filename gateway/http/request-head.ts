// A strict reader of HTTP/1.1 request heads for the gateway's front reader (gateway/front-reader.ts).
// Pure: bytes in, a verdict out.
//
// It is deliberately narrower than node:http's parser. It answers only three questions: is this
// a plain read the front reader may answer itself, a complete request without a body that
// node:http should answer alone (and where it ends), or something it will not judge, after which
// node:http reads the rest of the connection. Where a head ends is the one thing it must never get
// wrong, so anything that could make two parsers disagree about that (a body header, an upgrade,
// a stray CR or LF, a folded line, a byte outside printable ASCII) is "not judged".

/** The request headers a plain read may carry: none of them changes what a fresh hit answers. */
export interface PlainHeaders {
  [name: string]: string | undefined;
  host: string;
  'user-agent'?: string;
  accept?: string;
  'accept-encoding'?: string;
  'accept-language'?: string;
}

export type RequestHead =
  /** No complete head yet. */
  | { readonly kind: 'partial' }
  /** GET or HEAD, HTTP/1.1, kept alive, only PlainHeaders: answerable from memory. */
  | {
      readonly kind: 'plain';
      readonly end: number;
      readonly method: 'GET' | 'HEAD';
      readonly target: string;
      readonly headers: PlainHeaders;
    }
  /** A complete GET or HEAD without a body, ending at `end`: node:http answers it. */
  | { readonly kind: 'alone'; readonly end: number }
  /** Anything else: node:http reads the connection from here on. */
  | { readonly kind: 'opaque' };

const PARTIAL: RequestHead = { kind: 'partial' };
const OPAQUE: RequestHead = { kind: 'opaque' };
const HEAD_END = Buffer.from('\r\n\r\n');

/** RFC 9110 §5.6.2 tchar, by byte. */
const TCHAR = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~") TCHAR[c.charCodeAt(0)] = 1;
for (let c = 0x30; c <= 0x39; c++) TCHAR[c] = 1;
for (let c = 0x41; c <= 0x5a; c++) TCHAR[c] = 1;
for (let c = 0x61; c <= 0x7a; c++) TCHAR[c] = 1;

const PLAIN_NAMES = new Set(['host', 'user-agent', 'accept', 'accept-encoding', 'accept-language']);
/** Headers that frame a body or change the connection: node:http judges the rest. */
const OPAQUE_NAMES = new Set(['content-length', 'transfer-encoding', 'upgrade', 'expect', 'http2-settings']);

const SP = 0x20;
const HTAB = 0x09;
const CR = 0x0d;

/** Whether bytes [from, to) are a field value's visible ASCII, spaces and tabs. */
function printable(buf: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = buf[i]!;
    if ((c < SP && c !== HTAB) || c > 0x7e) return false;
  }
  return true;
}

/**
 * Reads the request head starting at `start`. `maxBytes` bounds a head (a longer one is left to
 * node:http, which answers 431).
 */
export function readRequestHead(buf: Buffer, start: number, maxBytes: number): RequestHead {
  const crlf2 = buf.indexOf(HEAD_END, start);
  if (crlf2 < 0) return buf.length - start > maxBytes ? OPAQUE : PARTIAL;
  if (crlf2 + 4 - start > maxBytes) return OPAQUE;
  const end = crlf2 + 4;
  let method: 'GET' | 'HEAD';
  let p: number;
  if (buf[start] === 0x47 && buf[start + 1] === 0x45 && buf[start + 2] === 0x54 && buf[start + 3] === SP) {
    method = 'GET';
    p = start + 4;
  } else if (buf.toString('latin1', start, start + 5) === 'HEAD ') {
    method = 'HEAD';
    p = start + 5;
  } else return OPAQUE;
  const targetStart = p;
  while (p < crlf2 && buf[p]! > SP && buf[p]! < 0x7f) p++;
  if (p === targetStart || buf[p] !== SP) return OPAQUE;
  const target = buf.toString('latin1', targetStart, p);
  const lineEnd = buf.indexOf(CR, p);
  const version = buf.toString('latin1', p + 1, lineEnd);
  if ((version !== 'HTTP/1.1' && version !== 'HTTP/1.0') || buf[lineEnd + 1] !== 0x0a) return OPAQUE;
  let plain = version === 'HTTP/1.1';
  const headers: Partial<PlainHeaders> = {};
  let lineStart = lineEnd + 2;
  while (lineStart < crlf2 + 2) {
    const eol = buf.indexOf(CR, lineStart);
    if (buf[eol + 1] !== 0x0a) return OPAQUE;
    let colon = lineStart;
    while (colon < eol && TCHAR[buf[colon]!] === 1) colon++;
    if (colon === lineStart || buf[colon] !== 0x3a) return OPAQUE;
    if (!printable(buf, colon + 1, eol)) return OPAQUE;
    let vs = colon + 1;
    let ve = eol;
    while (vs < ve && (buf[vs] === SP || buf[vs] === HTAB)) vs++;
    while (ve > vs && (buf[ve - 1] === SP || buf[ve - 1] === HTAB)) ve--;
    const name = buf.toString('latin1', lineStart, colon).toLowerCase();
    lineStart = eol + 2;
    if (OPAQUE_NAMES.has(name)) return OPAQUE;
    if (name === 'connection') {
      const v = buf.toString('latin1', vs, ve).toLowerCase();
      if (v === 'close') plain = false;
      else if (v !== 'keep-alive') return OPAQUE;
      continue;
    }
    if (!plain) continue;
    if (!PLAIN_NAMES.has(name) || name in headers) {
      plain = false;
      continue;
    }
    headers[name as keyof PlainHeaders] = buf.toString('latin1', vs, ve);
  }
  if (!plain || headers.host === undefined) return { kind: 'alone', end };
  return { kind: 'plain', end, method, target, headers: headers as PlainHeaders };
}
