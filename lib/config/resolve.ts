// Resolves a role's configuration from its four sources with the documented precedence:
// flags > environment (ESTUARY_<ROLE>_<KEY>, then ESTUARY_<KEY>) > config file > defaults.
// Pure: the caller reads the file and the environment and passes them in.

import { ConfigError, configErrors } from './errors.ts';
import { type ConfigOf, envName, flagName, keyFromFile, type OptionTable } from './options.ts';
import { closestKey } from './suggest.ts';
import { ValueError } from './values.ts';

export type Origin = 'flag' | 'env' | 'file' | 'default';

export interface ConfigSources {
  /** Parsed flags keyed by option key (camelCase); strings, string arrays or booleans. */
  readonly flags: Record<string, unknown>;
  readonly env: Record<string, string | undefined>;
  /** The config file's content, already parsed from YAML/JSON, and its path for messages. */
  readonly file?: { readonly path: string; readonly data: unknown };
}

export interface Resolved<O extends OptionTable> {
  readonly config: ConfigOf<O>;
  readonly origin: Record<keyof O & string, Origin>;
}

/**
 * A config file may hold one role's keys at the top level, or sections named after roles
 * (`gateway:`, `agent:` ...) so one file can serve a whole host. Top-level keys that belong to no
 * option of this role are errors only when the file has no role sections.
 */
function fileSection(
  role: string,
  options: OptionTable,
  file: ConfigSources['file'],
): Record<string, unknown> {
  if (!file || file.data === undefined || file.data === null) return {};
  if (typeof file.data !== 'object' || Array.isArray(file.data)) {
    throw configErrors.fileNotMapping(file.path);
  }
  const data = file.data as Record<string, unknown>;
  const section = data[role];
  const own: Record<string, unknown> = {};
  const hasSections = Object.values(data).some(
    (v) => v !== null && typeof v === 'object' && !Array.isArray(v),
  );
  for (const [name, value] of Object.entries(data)) {
    const key = keyFromFile(name);
    if (key in options) own[key] = value;
    else if (!hasSections)
      throw configErrors.unknownFileKey(file.path, name, role, Object.keys(options).map(flagName));
  }
  // A section that is this role's name misspelt would otherwise be ignored, and the role would
  // run on defaults ("no sites"): name it.
  if (section === undefined && hasSections)
    for (const name of Object.keys(data))
      if (name !== role && !(keyFromFile(name) in options) && closestKey(name, [role]) === role)
        throw configErrors.misspeltSection(file.path, name, role);
  if (section !== undefined) {
    if (section === null || typeof section !== 'object' || Array.isArray(section)) {
      throw configErrors.fileNotMapping(`${file.path} (section ${role})`);
    }
    for (const [name, value] of Object.entries(section as Record<string, unknown>)) {
      const key = keyFromFile(name);
      if (!(key in options)) {
        throw configErrors.unknownFileKey(
          file.path,
          `${role}.${name}`,
          role,
          Object.keys(options).map(flagName),
        );
      }
      own[key] = value;
    }
  }
  return own;
}

export function resolveConfig<O extends OptionTable>(
  role: string,
  options: O,
  sources: ConfigSources,
): Resolved<O> {
  const fromFile = fileSection(role, options, sources.file);
  const config: Record<string, unknown> = {};
  const origin: Record<string, Origin> = {};
  for (const [key, spec] of Object.entries(options)) {
    const scoped = envName(role, key);
    const shared = envName(undefined, key);
    const candidates: [Origin, unknown, string][] = [
      ['flag', sources.flags[key], `--${flagName(key)}`],
      ['env', sources.env[scoped], scoped],
      ['env', sources.env[shared], shared],
      ['file', fromFile[key], `${sources.file?.path ?? 'config file'} key ${flagName(key)}`],
    ];
    // An empty flag or variable means "not set" (FOO= in a unit file); an empty value written
    // in the file for an option with a non-empty default is refused: it reads as a wish for an
    // empty value, and quietly taking the default instead (a prefix "" becoming "es-") is worse.
    const written = fromFile[key];
    if (written === '' && typeof spec.default === 'string' && spec.default !== '')
      throw configErrors.invalidValue(candidates[3]![2], '', `a value (leave the key out for the default, ${spec.default})`);
    const hit = candidates.find(([, value]) => value !== undefined && value !== '');
    if (!hit) {
      config[key] = spec.default;
      origin[key] = 'default';
      continue;
    }
    const [from, raw, where] = hit;
    try {
      config[key] = spec.type.parse(raw);
    } catch (err) {
      if (!(err instanceof ValueError)) throw err;
      throw configErrors.invalidValue(where, spec.secret ? '<hidden>' : String(raw), err.message);
    }
    origin[key] = from;
  }
  return { config: config as ConfigOf<O>, origin: origin as Record<keyof O & string, Origin> };
}

/** The resolved configuration as plain text values, secrets hidden: for --print-config. */
export function printable<O extends OptionTable>(options: O, resolved: Resolved<O>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(options)) {
    const value = (resolved.config as Record<string, unknown>)[key];
    const shown = value === undefined ? null : spec.secret ? '<hidden>' : spec.type.format(value);
    out[flagName(key)] = { value: shown, from: resolved.origin[key as keyof O & string] };
  }
  return out;
}

export { ConfigError };
