// The scalar values the coordinator's configuration files hold, as zod schemas: durations, sizes,
// link rates and names, each refused in one line that says what was expected, and the key style
// (kebab-case or snake_case in files, camelCase in the schemas). Pure: no I/O.

import { z } from 'zod';
import { formatDuration, parseDuration, parseSize } from '../lib/config/values.ts';

/** A duration in files: "90s", "5m", or a bare number of seconds. */
export const durationMs = z.union([z.number().nonnegative(), z.string()]).transform((v, ctx) => {
  try {
    return typeof v === 'number' ? Math.round(v * 1000) : parseDuration(v);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'expected a duration such as 90s, 5m or 1h' });
    return z.NEVER;
  }
});

/** The longest duration any flag takes (a year), as lib/config/values.ts's `duration`. */
const DURATION_MAX_MS = 365 * 86_400_000;

/**
 * A duration held to the bounds of the flag of the same name, refused in the flag's words: a
 * per-site or scenario value must not take what `--boot-timeout` or `--interval` refuses.
 */
export const durationIn = (minMs: number, maxMs = DURATION_MAX_MS) =>
  durationMs.refine((v) => v >= minMs && v <= maxMs, { message: `expected a duration from ${formatDuration(minMs)} to ${formatDuration(maxMs)}` });

/** A call's deadline: 0 would let no call finish, every one failing for ever as "no answer". */
export const timeoutMs = durationMs.refine((v) => v > 0, { message: 'a timeout of 0 lets no call finish; give one such as 30s' });

/** A size in files: "8GiB", "4000MB", or a bare number of bytes. */
export const bytes = z.union([z.number().positive(), z.string()]).transform((v, ctx) => {
  try {
    return typeof v === 'number' ? v : parseSize(v);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'expected a size such as 4GiB or 8000MB' });
    return z.NEVER;
  }
});

/** YAML keys are written like flags (pending-for, cost_per_core_hour); the schemas use camelCase. */
export function camelKeys(v: unknown): unknown {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
  return Object.fromEntries(
    Object.entries(v as Record<string, unknown>).map(([k, x]) => [k.replace(/[-_]([a-z0-9])/g, (_, c: string) => c.toUpperCase()), x]),
  );
}
/** A strict object whose keys may be written kebab-case or snake_case. */
export const keyed = <T extends z.ZodType>(schema: T) => z.preprocess(camelKeys, schema);

/** A link rate in files: "1gbit", "100mbit", "500kbit", or a bare number of bits per second. */
export const bitsPerSecond = z.union([z.number().positive(), z.string()]).transform((v, ctx) => {
  if (typeof v === 'number') return v;
  const m = /^(\d+(?:\.\d+)?)(kbit|mbit|gbit)$/.exec(v);
  if (!m) {
    ctx.addIssue({ code: 'custom', message: 'expected a rate such as 100mbit or 1gbit' });
    return z.NEVER;
  }
  return Number(m[1]) * { kbit: 1e3, mbit: 1e6, gbit: 1e9 }[m[2] as 'kbit' | 'mbit' | 'gbit'];
});

export const name = z.string().regex(/^[a-z][a-z0-9-]{0,30}$/, 'lower-case letters, digits and -, starting with a letter');
/** The names of sites, machine types and storage locations, for a scenario's own records. */
export const nameSchema = name;
export const feature = z.string().regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, _ . and - only');
