// Keys in listings asked for with `encoding-type=url`. XML 1.0 cannot carry most control
// characters: a listing holding a key with `\x01` or `\x1b` is not well-formed unless the server
// percent-encodes its keys (Swift sends such keys only when asked to, and otherwise fails the whole
// listing), so every listing asks, and keys are decoded here. Servers that ignore the parameter
// (s3rver) say so by leaving EncodingType out of the response; their keys are taken as they come.
// The decoded bytes are read as UTF-8; bytes that are not UTF-8 become U+FFFD, as an unencoded
// listing gives them, and no request can name such a key. Pure: no I/O.

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
  return Buffer.from(bytes).toString('utf8');
}

/** `decode` when the response says its keys are URL-encoded, else the key as it came. */
export function listedKey(key: string, encodingType: string | undefined): string {
  return encodingType?.toLowerCase() === 'url' ? decodeListedKey(key) : key;
}
