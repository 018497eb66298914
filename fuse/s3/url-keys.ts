// Keys in listings asked for with `encoding-type=url`. XML 1.0 cannot carry most control
// characters: a listing holding a key with `\x01` or `\x1b` is not well-formed unless the server
// percent-encodes its keys (Swift sends such keys only when asked to, and otherwise fails the whole
// listing), so every listing asks, and keys are decoded here. Servers that ignore the parameter
// (s3rver) say so by leaving EncodingType out of the response; their keys are taken as they come.
// The decoded bytes are read as UTF-8; each byte that is not part of UTF-8 becomes a lone
// surrogate (U+DC80 + the byte, as Python's surrogateescape), which no UTF-8 text can hold, so
// such a key is known not to be UTF-8 (no request can name it) while a key that really holds
// U+FFFD stays a name like any other. Answers' bodies are read the same way (utf8Marked), for
// servers that send keys unencoded. Pure: no I/O.

const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Marks a byte that is not part of UTF-8; see notUtf8. */
const marked = (byte: number): string => String.fromCharCode(0xdc00 + byte);

/** Bytes as UTF-8 text, each byte that is not UTF-8 as a lone surrogate (see notUtf8). */
export function utf8Marked(bytes: Uint8Array): string {
  try {
    return strict.decode(bytes);
  } catch {
    // Slow path, only for text that is not UTF-8: one character (or one marked byte) at a time.
  }
  let out = '';
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i]!;
    const len = b < 0x80 ? 1 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 0;
    let char: string | undefined;
    if (len > 0 && i + len <= bytes.length) {
      try {
        char = strict.decode(bytes.subarray(i, i + len));
      } catch {
        char = undefined;
      }
    }
    out += char ?? marked(b);
    i += char === undefined ? 1 : len;
  }
  return out;
}

/** Whether text from utf8Marked held bytes that are not UTF-8. */
export const notUtf8 = (text: string): boolean => /\p{Cs}/u.test(text);

/** S3's form encoding: `%XX` for bytes, `+` for a space (a `+` itself comes as `%2B`). */
export function decodeListedKey(encoded: string): string {
  if (!/[%+]/.test(encoded)) return encoded;
  const bytes: number[] = [];
  for (let i = 0; i < encoded.length; i++) {
    const c = encoded[i]!;
    const hex = c === '%' ? encoded.slice(i + 1, i + 3) : '';
    if (/^[0-9a-fA-F]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else if (c === '+') {
      bytes.push(0x20);
    } else {
      bytes.push(...Buffer.from(c === '%' ? c : String.fromCodePoint(encoded.codePointAt(i)!)));
      if (encoded.codePointAt(i)! > 0xffff) i++;
    }
  }
  return utf8Marked(Buffer.from(bytes));
}

/** `decode` when the response says its keys are URL-encoded, else the key as it came. */
export function listedKey(key: string, encodingType: string | undefined): string {
  return encodingType?.toLowerCase() === 'url' ? decodeListedKey(key) : key;
}
