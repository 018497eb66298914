// An option table is a role's configuration schema: one entry per option, naming its value type,
// default and description. Flags, environment variables, config-file keys, --help text, the types
// the role's code sees and docs/CONFIGURATION.md are all derived from it, so they cannot drift.

import type { ValueType } from './values.ts';

export interface OptionSpec<T> {
  readonly type: ValueType<T>;
  readonly default: T;
  readonly describe: string;
  /** One-letter alias, e.g. 'n' for -n. */
  readonly short?: string;
  /** Hidden from --print-config output (tokens, keys, passwords). */
  readonly secret?: boolean;
  /**
   * The values of the command's first argument this option matters for (bench's scenarios);
   * `estuary bench fuse --help` then lists only these and the options without a scope.
   */
  readonly scope?: readonly string[];
}

// `any`: an option table holds options of any value type.
export type OptionTable = Record<string, OptionSpec<any>>;

export type ConfigOf<O extends OptionTable> = {
  -readonly [K in keyof O]: O[K] extends OptionSpec<infer T> ? T : never;
};

export function option<T>(
  type: ValueType<T>,
  defaultValue: T,
  describe: string,
  extra: { short?: string; secret?: boolean; scope?: readonly string[] } = {},
): OptionSpec<T> {
  return { type, default: defaultValue, describe, ...extra };
}

/** An option with no default: the role sees `undefined` when nobody set it. */
export function optional<T>(
  type: ValueType<T>,
  describe: string,
  extra: { short?: string; secret?: boolean; scope?: readonly string[] } = {},
): OptionSpec<T | undefined> {
  return {
    type: type as ValueType<T | undefined>,
    default: undefined,
    describe,
    ...extra,
  };
}

/** cacheDir -> cache-dir */
export function flagName(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** ('gateway', 'cacheDir') -> ESTUARY_GATEWAY_CACHE_DIR; (undefined, 'cacheDir') -> ESTUARY_CACHE_DIR */
export function envName(role: string | undefined, key: string): string {
  const k = flagName(key).replace(/-/g, '_').toUpperCase();
  // A command of two words ("gateway credentials") reads ESTUARY_GATEWAY_CREDENTIALS_*.
  return role ? `ESTUARY_${role.toUpperCase().replace(/\s+/g, '_')}_${k}` : `ESTUARY_${k}`;
}

/** Accepts cache-dir, cache_dir and cacheDir in files. */
export function keyFromFile(name: string): string {
  return name.replace(/[-_]([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

export function describeDefault<T>(spec: OptionSpec<T>): string {
  if (spec.default === undefined) return '';
  if (Array.isArray(spec.default) && spec.default.length === 0) return '';
  return spec.type.format(spec.default);
}
