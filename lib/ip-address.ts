// What an IP address names, decided on its bytes rather than its spelling: `::1`, `0::1`,
// `0:0:0:0:0:0:0:1` and `::ffff:7f00:1` (IPv4-mapped 127.0.0.1) are one or two addresses written
// many ways, and a check on the text misses all but the one it lists. Pure: no I/O.

import { isIP } from 'node:net';

/** The 4 or 16 bytes of an address, IPv4-mapped IPv6 folded to its 4; undefined if not an IP. */
export function ipBytes(address: string): number[] | undefined {
  const kind = isIP(address);
  if (kind === 4) return address.split('.').map(Number);
  if (kind !== 6 || address.includes('%')) return undefined;
  // A dotted IPv4 tail (`::ffff:127.0.0.1`) is the last two 16-bit groups written another way.
  const text = address
    .toLowerCase()
    .replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_m, a: string, b: string, c: string, d: string) => {
      const hex = (x: string, y: string) => ((Number(x) << 8) | Number(y)).toString(16);
      return `${hex(a, b)}:${hex(c, d)}`;
    });
  const words = (s: string) => (s === '' ? [] : s.split(':').map((w) => parseInt(w, 16)));
  const [head, rest] = text.split('::') as [string, string | undefined];
  const before = words(head);
  const after = rest === undefined ? [] : words(rest);
  const groups = rest === undefined ? before : [...before, ...Array<number>(8 - before.length - after.length).fill(0), ...after];
  if (groups.length !== 8) return undefined;
  const bytes = groups.flatMap((g) => [(g >> 8) & 0xff, g & 0xff]);
  const mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return mapped ? bytes.slice(12) : bytes;
}

export type AddressScope = 'unicast' | 'loopback' | 'link-local' | 'unspecified' | 'multicast' | 'broadcast';

/** The scope of an address by its bytes; undefined when it is not an IP address (or has a zone id). */
export function addressScope(address: string): AddressScope | undefined {
  const b = ipBytes(address);
  if (!b) return undefined;
  if (b.length === 4) {
    const [a, second] = b as [number, number];
    if (a === 127) return 'loopback';
    if (a === 0) return 'unspecified';
    if (a === 169 && second === 254) return 'link-local';
    if (a >= 224 && a <= 239) return 'multicast';
    if (b.every((x) => x === 255)) return 'broadcast';
    return 'unicast';
  }
  const zeroHead = b.slice(0, 15).every((x) => x === 0);
  if (zeroHead && b[15] === 1) return 'loopback';
  if (zeroHead && b[15] === 0) return 'unspecified';
  if (b[0] === 0xff) return 'multicast';
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return 'link-local';
  return 'unicast';
}
