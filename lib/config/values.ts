// Value types for configuration options. Each parser accepts the text a user types on the command
// line or in an environment variable, and the native value a YAML/JSON file may hold, and returns
// the typed value or throws a ValueError whose message says what is allowed. Pure: no I/O.

import { isIP } from 'node:net';

export class ValueError extends Error {}

export interface ValueType<T> {
  /** Human words for what is allowed, used in errors and docs: "a size such as 256MiB". */
  readonly expected: string;
  /** Placeholder shown in --help: SIZE, HOST:PORT, URL. */
  readonly placeholder: string;
  parse(raw: unknown): T;
  /** Text form of a value, for --help defaults and --print-config. */
  format(value: T): string;
}

function text(raw: unknown, expected: string): string {
  if (typeof raw === 'string') return raw.trim();
  if (typeof raw === 'number' || typeof raw === 'boolean') return String(raw);
  throw new ValueError(`expected ${expected}`);
}

export const str = (placeholder = 'TEXT', expected = 'text'): ValueType<string> => ({
  expected,
  placeholder,
  parse: (raw) => text(raw, expected),
  format: (v) => v,
});

export const bool = (): ValueType<boolean> => ({
  expected: 'true or false',
  placeholder: 'BOOL',
  parse(raw) {
    if (typeof raw === 'boolean') return raw;
    const t = text(raw, this.expected).toLowerCase();
    if (['true', 'yes', '1', 'on'].includes(t)) return true;
    if (['false', 'no', '0', 'off'].includes(t)) return false;
    throw new ValueError(`expected ${this.expected}`);
  },
  format: (v) => String(v),
});

export const int = (min: number, max: number, placeholder = 'N'): ValueType<number> => ({
  expected: `a whole number from ${min} to ${max}`,
  placeholder,
  parse(raw) {
    const t = text(raw, this.expected);
    if (!/^-?\d+$/.test(t)) throw new ValueError(`expected ${this.expected}`);
    const n = Number(t);
    if (n < min || n > max) throw new ValueError(`expected ${this.expected}`);
    return n;
  },
  format: (v) => String(v),
});

export const float = (min: number, max: number, placeholder = 'X'): ValueType<number> => ({
  expected: `a number from ${min} to ${max}`,
  placeholder,
  parse(raw) {
    const t = text(raw, this.expected);
    const n = Number(t);
    if (t === '' || !Number.isFinite(n) || n < min || n > max)
      throw new ValueError(`expected ${this.expected}`);
    return n;
  },
  format: (v) => String(v),
});

const SIZE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1e3,
  kb: 1e3,
  m: 1e6,
  mb: 1e6,
  g: 1e9,
  gb: 1e9,
  t: 1e12,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/** Parses "256MiB", "1GB", "4k", "1048576" into bytes. Decimal units are powers of 1000. */
export function parseSize(t: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([a-zA-Z]*)$/.exec(t.trim());
  const unit = m ? SIZE_UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new ValueError('expected a size such as 512MiB, 2GB or 1048576');
  return Math.round(Number(m[1]) * unit);
}

export function formatSize(bytes: number): string {
  for (const [unit, n] of [
    ['TiB', 2 ** 40],
    ['GiB', 2 ** 30],
    ['MiB', 2 ** 20],
    ['KiB', 2 ** 10],
  ] as const) {
    if (bytes >= n && bytes % n === 0) return `${bytes / n}${unit}`;
  }
  return String(bytes);
}

export const size = (min = 0, max = Number.MAX_SAFE_INTEGER): ValueType<number> => ({
  expected: 'a size such as 512MiB, 2GB or 1048576',
  placeholder: 'SIZE',
  parse(raw) {
    const n = typeof raw === 'number' ? raw : parseSize(text(raw, this.expected));
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new ValueError(`expected a size from ${formatSize(min)} to ${formatSize(max)}`);
    }
    return n;
  },
  format: formatSize,
});

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses "5s", "250ms", "2m", "1h" (or a bare number of seconds) into milliseconds. */
export function parseDuration(t: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/.exec(t.trim());
  if (!m) throw new ValueError('expected a duration such as 250ms, 5s, 2m or 1h');
  return Math.round(Number(m[1]) * DURATION_UNITS[m[2] ?? 's']!);
}

export function formatDuration(ms: number): string {
  for (const [unit, n] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms >= n && ms % n === 0) return `${ms / n}${unit}`;
  }
  return `${ms}ms`;
}

/** A duration in milliseconds. In files a bare number means seconds, as on the command line. */
export const duration = (minMs = 0, maxMs = 365 * 86_400_000): ValueType<number> => ({
  expected: 'a duration such as 250ms, 5s, 2m or 1h',
  placeholder: 'DURATION',
  parse(raw) {
    const ms = parseDuration(text(raw, this.expected));
    if (ms < minMs || ms > maxMs) {
      throw new ValueError(`expected a duration from ${formatDuration(minMs)} to ${formatDuration(maxMs)}`);
    }
    return ms;
  },
  format: formatDuration,
});

export interface HostPort {
  host: string;
  port: number;
}

export const hostPort = (): ValueType<HostPort> => ({
  expected: 'HOST:PORT such as 0.0.0.0:3128, [::1]:8080 or :3128',
  placeholder: 'HOST:PORT',
  parse(raw) {
    const t = text(raw, this.expected);
    const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(t);
    const port = m ? Number(m[3]) : Number.NaN;
    if (!m || port > 65535) throw new ValueError(`expected ${this.expected}`);
    return { host: m[1] ?? (m[2] || '0.0.0.0'), port };
  },
  format: (v) => (v.host.includes(':') ? `[${v.host}]:${v.port}` : `${v.host}:${v.port}`),
});

export const url = (protocols: readonly string[] = ['http:', 'https:']): ValueType<string> => ({
  expected: `a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`,
  placeholder: 'URL',
  parse(raw) {
    const t = text(raw, this.expected);
    let u: URL;
    try {
      u = new URL(t);
    } catch {
      throw new ValueError(`expected ${this.expected}`);
    }
    if (!protocols.includes(u.protocol)) throw new ValueError(`expected ${this.expected}`);
    // URL drops a default port (":80" on http://) but keeps ":0" (and ":00") as "0"; clients read
    // port 0 as "no port" and connect to the scheme's default, a port the user never gave.
    if (u.port === '0') throw new ValueError(`expected ${this.expected} with a port from 1 to 65535`);
    return t;
  },
  format: (v) => v,
});

/** A list, written comma-separated (or as a YAML/JSON array, or by repeating the flag). */
export const list = <T>(item: ValueType<T>, placeholder = `${item.placeholder},...`): ValueType<T[]> => ({
  expected: `a comma-separated list of ${item.expected}`,
  placeholder,
  parse(raw) {
    const parts = Array.isArray(raw)
      ? raw.flatMap((r) => (typeof r === 'string' ? r.split(',') : [r]))
      : text(raw, this.expected).split(',');
    return parts
      .map((p) => (typeof p === 'string' ? p.trim() : p))
      .filter((p) => p !== '')
      .map((p) => item.parse(p));
  },
  format: (v) => v.map((x) => item.format(x)).join(','),
});

/** One of `choices`; `placeholder` names the value in --help where listing them all would not fit. */
export const oneOf = <const T extends string>(choices: readonly T[], placeholder = choices.join('|')): ValueType<T> => ({
  expected: `one of ${choices.join(', ')}`,
  placeholder,
  parse(raw) {
    const t = text(raw, this.expected);
    if (!(choices as readonly string[]).includes(t)) throw new ValueError(`expected ${this.expected}`);
    return t as T;
  },
  format: (v) => v,
});

/** A CIDR block such as 10.0.0.0/8 or ::1/128; a bare address means a single host. */
export const cidr = (): ValueType<string> => ({
  expected: 'a CIDR block such as 10.0.0.0/8 or 2001:db8::/32',
  placeholder: 'CIDR',
  parse(raw) {
    const t = text(raw, this.expected);
    const [addr, bits, extra] = t.split('/');
    const family = isIP(addr ?? '');
    const max = family === 6 ? 128 : 32;
    if (!family || extra !== undefined) throw new ValueError(`expected ${this.expected}`);
    if (bits !== undefined && (!/^\d{1,3}$/.test(bits) || Number(bits) > max)) {
      throw new ValueError(`expected ${this.expected}`);
    }
    return bits === undefined ? `${addr}/${max}` : t;
  },
  format: (v) => v,
});
