// Address arithmetic for deciding who may be sent to which cache: CIDR membership and the private
// ranges. Pure. IPv4 is kept as a 32-bit number and IPv6 as a BigInt; IPv4-mapped IPv6 addresses
// (::ffff:10.1.2.3, which Node reports for IPv4 clients on a dual-stack socket) count as IPv4.

import { isIP } from 'node:net';

export interface Cidr {
  readonly family: 4 | 6;
  readonly base: bigint;
  readonly bits: number;
  readonly text: string;
}

function v4ToBig(addr: string): bigint {
  const parts = addr.split('.').map(Number);
  return BigInt(((parts[0]! << 24) >>> 0) + (parts[1]! << 16) + (parts[2]! << 8) + parts[3]!);
}

function v6ToBig(addr: string): bigint {
  let text = addr;
  const v4tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4tail) {
    const n = v4ToBig(v4tail[1]!);
    text = `${text.slice(0, v4tail.index)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(Number.parseInt(g || '0', 16)), 0n);
}

/** Normalises an address: strips brackets and zone ids, turns IPv4-mapped IPv6 into IPv4. */
export function normaliseAddress(addr: string): string {
  const a = addr.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a);
  return mapped ? mapped[1]! : a;
}

export function parseCidr(text: string): Cidr {
  const [addrRaw, bitsText] = text.trim().split('/');
  const addr = normaliseAddress(addrRaw ?? '');
  const family = isIP(addr);
  if (family === 0) throw new Error(`"${text}" is not a CIDR block`);
  const max = family === 4 ? 32 : 128;
  const bits = bitsText === undefined ? max : Number(bitsText);
  if (!Number.isInteger(bits) || bits < 0 || bits > max) throw new Error(`"${text}" has a bad prefix length`);
  const value = family === 4 ? v4ToBig(addr) : v6ToBig(addr);
  const shift = BigInt(max - bits);
  return { family: family as 4 | 6, base: (value >> shift) << shift, bits, text: text.trim() };
}

export function cidrContains(cidr: Cidr, address: string): boolean {
  const addr = normaliseAddress(address);
  const family = isIP(addr);
  if (family !== cidr.family) return false;
  const max = family === 4 ? 32 : 128;
  const shift = BigInt(max - cidr.bits);
  const value = family === 4 ? v4ToBig(addr) : v6ToBig(addr);
  return (value >> shift) << shift === cidr.base;
}

/** Shoal's private ranges, plus IPv6 unique-local and link-local addresses. */
const PRIVATE = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7', 'fe80::/10'].map(parseCidr);
const LOOPBACK = ['127.0.0.0/8', '::1/128'].map(parseCidr);

export function isPrivateAddress(address: string): boolean {
  return PRIVATE.some((c) => cidrContains(c, address));
}

export function isLoopback(address: string): boolean {
  return LOOPBACK.some((c) => cidrContains(c, address));
}

/**
 * Whether two addresses share a network when no site map says so: the same /24 for IPv4 and /64
 * for IPv6, the usual size of one subnet a batch farm and its cache sit on.
 */
export function sameSubnet(a: string, b: string): boolean {
  const x = normaliseAddress(a);
  const y = normaliseAddress(b);
  const family = isIP(x);
  if (family === 0 || family !== isIP(y)) return false;
  return family === 4 ? v4ToBig(x) >> 8n === v4ToBig(y) >> 8n : v6ToBig(x) >> 64n === v6ToBig(y) >> 64n;
}
